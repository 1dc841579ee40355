// A body that starts later from somewhere else (a slot freed by another
// task, a timer, a peer's exit) must run in the async context of its run()
// call (the async-context guarantee of the core README). Two ways to keep that context, chosen once per
// process:
//
// - a snapshot, where the platform offers one: `AsyncContext.Snapshot`, or
//   Node's `AsyncResource` reached through `process.getBuiltinModule` (a
//   feature test, not an import: core stays free of Node). A snapshot is one
//   small object and is entered from a shared microtask;
// - elsewhere, a promise door: a promise reaction runs in the context in
//   which it was registered, so a reaction registered inside run() is a way
//   back. It costs a pending promise, its resolver, the reaction and its
//   promise (bench/README.md has what each way costs), and enters one
//   microtask later.
//
// Either is made only for a task that waits: a body that starts inside
// run() is already in its context and pays nothing.

/** A captured async context; opaque, entered with {@link enterSnapshot}. */
export interface ContextSnapshot {
  readonly __contextSnapshot: never
}

/** How this platform captures and re-enters a context without a promise. */
export interface SnapshotPlatform {
  readonly name: string
  capture(): ContextSnapshot
  enter<V>(snapshot: ContextSnapshot, enter: (value: V) => unknown, value: V): void
}

interface AsyncContextSnapshotLike {
  run<V>(fn: (value: V) => unknown, value: V): unknown
}
interface AsyncResourceLike {
  runInAsyncScope<V>(fn: (value: V) => unknown, thisArg: undefined, value: V): unknown
}

type SnapshotConstructor = new () => AsyncContextSnapshotLike
type ResourceConstructor = new (type: string) => AsyncResourceLike

/** Feature-detects a snapshot: the TC39 proposal's first, then Node's (also Deno's and Bun's). */
export function detectSnapshotPlatform(): SnapshotPlatform | undefined {
  const global = globalThis as {
    AsyncContext?: { Snapshot?: SnapshotConstructor }
    process?: { getBuiltinModule?: (id: string) => unknown }
  }
  const Snapshot = global.AsyncContext?.Snapshot
  if (typeof Snapshot === 'function') {
    return {
      name: 'AsyncContext.Snapshot',
      capture: () => new Snapshot() as unknown as ContextSnapshot,
      enter: (snapshot, enter, value) => {
        ;(snapshot as unknown as AsyncContextSnapshotLike).run(enter, value)
      },
    }
  }
  let hooks: { AsyncResource?: ResourceConstructor } | undefined
  try {
    hooks = global.process?.getBuiltinModule?.('node:async_hooks') as typeof hooks
  } catch {
    hooks = undefined
  }
  const Resource = hooks?.AsyncResource
  if (typeof Resource === 'function') {
    return {
      name: 'AsyncResource',
      capture: () => new Resource('@vega/job') as unknown as ContextSnapshot,
      enter: (snapshot, enter, value) => {
        ;(snapshot as unknown as AsyncResourceLike).runInAsyncScope(enter, undefined, value)
      },
    }
  }
  return undefined
}

let platform: SnapshotPlatform | undefined = detectSnapshotPlatform()

/**
 * Replaces the platform's snapshot (`undefined`: the promise door) and
 * returns the previous one. For the kernel's own tests, which run the
 * async-context suite through both ways; never while a task waits.
 */
export function useSnapshotPlatform(
  next: SnapshotPlatform | undefined,
): SnapshotPlatform | undefined {
  const previous = platform
  platform = next
  return previous
}

/** A snapshot of the current context, or `undefined` where only the promise door works. */
export function takeSnapshot(): ContextSnapshot | undefined {
  return platform === undefined ? undefined : platform.capture()
}

// Entries waiting for the next microtask, flat: snapshot, enter, value. The
// array is kept between drains (its slots cleared as they run): a fresh one
// per drain would regrow, and reallocate, on every turn a slot frees.
let entries: unknown[] = []
let entryCount = 0
let draining = false
const RESOLVED = Promise.resolve()
/** Above this many slots a drained array is dropped rather than kept (a burst's peak). */
const KEPT_SLOTS = 3 * 1024

/**
 * Runs `enter(value)` in the context `snapshot` captured, one microtask
 * later — the promise door's timing, so a body starts at the same moment on
 * every platform, and a slot granted in a cancel's microtask is seen as
 * granted-not-entered either way. Entries made in one turn share one
 * microtask, and a body that frees a slot for the next does not nest it on
 * the stack.
 */
export function enterSnapshot<V>(
  snapshot: ContextSnapshot,
  enter: (value: V) => unknown,
  value: V,
): void {
  entries[entryCount] = snapshot
  entries[entryCount + 1] = enter
  entries[entryCount + 2] = value
  entryCount += 3
  if (!draining) {
    draining = true
    RESOLVED.then(drainEntries)
  }
}

function drainEntries(): void {
  const enter = platform!.enter
  let i = 0
  try {
    // Entries pushed while draining run in this loop, after the ones before them.
    for (; i < entryCount; i += 3) {
      const snapshot = entries[i] as ContextSnapshot
      const fn = entries[i + 1] as (value: unknown) => unknown
      const value = entries[i + 2]
      entries[i] = entries[i + 1] = entries[i + 2] = undefined
      enter(snapshot, fn, value)
    }
  } finally {
    if (i >= entryCount) {
      entryCount = 0
      if (entries.length > KEPT_SLOTS) entries = []
      draining = false
    } else {
      // An entry threw (a kernel bug, not a body: bodies are caught inside):
      // the ones behind it still enter, in the next microtask.
      entries = entries.slice(i + 3, entryCount)
      entryCount = entries.length
      RESOLVED.then(drainEntries)
    }
  }
}

/**
 * The promise door: `carrier(value)` runs the `enter` given at capture with
 * `value`, in the captured context, one microtask later. Once. A door that
 * is never opened (its task ended while it waited) is dropped with the
 * task: its pending promise holds nothing else.
 */
export type ContextCarrier<V> = (value: V) => void

/** Captures the current context as a door through which `enter` runs later. */
export function captureContext<V>(enter: (value: V) => unknown): ContextCarrier<V> {
  let open!: ContextCarrier<V>
  new Promise<V>((resolve) => {
    open = resolve
  }).then(enter)
  return open
}
