import {
  counts,
  type EventBus,
  getEventBus,
  type Runtime,
  type RuntimeCounts,
  type RuntimeEvent,
} from '@vega/job-core'
import { describe } from './describe.js'

type Listener = (event: RuntimeEvent) => void

/** What `useCounts` reads before its component is mounted, and on the server: nothing has run there. */
export const ZERO_COUNTS: RuntimeCounts = Object.freeze({
  live: 0,
  parked: 0,
  queued: 0,
  running: 0,
  exiting: 0,
})

const hubs = new WeakMap<Runtime, RuntimeHub>()

/** The one hub of `runtime`, shared by every composable that listens to its bus. */
export function hubOf(runtime: Runtime): RuntimeHub {
  let hub = hubs.get(runtime)
  if (hub === undefined) {
    hub = new RuntimeHub(getEventBus(runtime), runtime)
    hubs.set(runtime, hub)
  }
  return hub
}

/** Checks that `runtime` is one (getEventBus throws for anything else), naming where it came from. */
export function assertRuntime(runtime: unknown, where: string): asserts runtime is Runtime {
  try {
    if (runtime === null || typeof runtime !== 'object') throw new TypeError('not an object')
    getEventBus(runtime as Runtime)
  } catch (cause) {
    throw new TypeError(
      `${where}: runtime must be a runtime from createRuntime(), got ${describe(runtime)}.`,
      {
        cause,
      },
    )
  }
}

/**
 * One bus listener per runtime, held while a composable needs it
 * (`useCounts`, `useRuntimeEvent`) and fanned out by event type, so a
 * thousand mounted components still cost the runtime one listener. Tasks
 * are watched with core's `watch`, which needs no bus listener at all.
 */
export class RuntimeHub {
  readonly #bus: EventBus
  readonly #runtime: Runtime
  readonly #byType = new Map<string, Set<Listener>>()
  readonly #countsWatchers = new Set<(counts: RuntimeCounts) => void>()
  #counts: RuntimeCounts = ZERO_COUNTS
  #unsubscribe: (() => void) | undefined
  #holders = 0

  constructor(bus: EventBus, runtime: Runtime) {
    this.#bus = bus
    this.#runtime = runtime
  }

  /** Calls `listener` with every event of `type`; returns the unsubscribe (idempotent). */
  onEvent(type: string, listener: Listener): () => void {
    let listeners = this.#byType.get(type)
    if (listeners === undefined) this.#byType.set(type, (listeners = new Set()))
    listeners.add(listener)
    const release = this.#hold()
    return () => {
      const current = this.#byType.get(type)
      if (current?.delete(listener) && current.size === 0) this.#byType.delete(type)
      release()
    }
  }

  /** Calls `onChange` with the counts each time one of them changed; returns the unwatch. */
  watchCounts(onChange: (counts: RuntimeCounts) => void): () => void {
    this.#countsWatchers.add(onChange)
    const release = this.#hold()
    return () => {
      this.#countsWatchers.delete(onChange)
      release()
    }
  }

  /** `counts(runtime)`, the same frozen object while no count changed. */
  currentCounts(): RuntimeCounts {
    const next = counts(this.#runtime)
    const last = this.#counts
    if (
      next.live === last.live &&
      next.parked === last.parked &&
      next.queued === last.queued &&
      next.running === last.running &&
      next.exiting === last.exiting
    ) {
      return last
    }
    this.#counts = Object.freeze(next)
    return this.#counts
  }

  #hold(): () => void {
    if (this.#holders++ === 0) this.#unsubscribe = this.#bus.subscribe(this.#onEvent)
    let held = true
    return () => {
      if (!held) return
      held = false
      if (--this.#holders === 0) {
        this.#unsubscribe?.()
        this.#unsubscribe = undefined
      }
    }
  }

  readonly #onEvent = (event: RuntimeEvent): void => {
    // The runtime has moved when its listeners hear an event: counts() is current.
    if (this.#countsWatchers.size > 0 && event.type.startsWith('task:')) {
      const before = this.#counts
      const now = this.currentCounts()
      if (now !== before) for (const onChange of [...this.#countsWatchers]) onChange(now)
    }
    const listeners = this.#byType.get(event.type)
    if (listeners !== undefined) for (const listener of [...listeners]) listener(event)
  }
}
