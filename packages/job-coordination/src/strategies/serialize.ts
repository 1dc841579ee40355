import { assertKnownKeys, type Task } from '@vega/job-core'
import { internalsOf } from '../coordinator-adapter.js'
import { defineCoordinator } from '../define-coordinator.js'
import { deferred } from '../internal/deferred.js'
import { describeValue } from '../internal/describe-value.js'
import { endingOf } from '../internal/ending.js'
import { KeyedStore } from '../internal/keyed-store.js'
import { LinkedList } from '../internal/linked-list.js'
import type { CoordinationScope, KeyState } from '../internal/scope.js'
import type { CoordinationContext, Coordinator } from '../types.js'

/**
 * Options of {@link createSerializeCoordinator}.
 *
 * @example
 * ```ts
 * const options: SerializeOptions = { concurrency: 2, name: 'uploads' }
 * ```
 */
export interface SerializeOptions {
  /** How many calls per key may be in flight at once; a positive integer or `Infinity`. Default 1. */
  concurrency?: number | undefined
  /** The coordinator's name in diagnostic events; default `'serialize'`. */
  name?: string | undefined
}

/**
 * What {@link createSerializeCoordinator} returns: the coordinator to bind,
 * and its lifecycle.
 *
 * @example
 * ```ts
 * const { coordinator, dispose }: SerializeCoordinator = createSerializeCoordinator()
 * ```
 */
export interface SerializeCoordinator {
  /** Bind it with `withCoordinator(taskFn, serialize.coordinator, { key })`. */
  readonly coordinator: Coordinator
  /**
   * Skips every waiter (`cancelled` / `shutdown`, its promise rejects) and
   * makes every later call through this coordinator skip the same way.
   * Calls already in flight are not touched. Idempotent.
   */
  dispose(): void
  /**
   * Abandons the current generation of queues: their waiters are never
   * released by them, and the next call of any key starts a fresh queue that
   * does not wait for old-generation calls. `cancelAll(runtime)` runs it for
   * you (it is a pre-cancel hook of every runtime the coordinator serves),
   * so the waiters it cancels never start on the way out.
   */
  resetAdmission(): void
}

interface Waiter {
  readonly ctx: CoordinationContext
  readonly release: (answer: Promise<unknown>) => void
}

/** One key's queue: how many calls are in flight, and who waits, in call order. */
class KeyQueue implements KeyState {
  inFlight = 0
  readonly waiters: LinkedList<Waiter> = new LinkedList()
  /** Dropped by resetAdmission or dispose: it releases nobody any more. */
  abandoned = false
  private pumping = false

  constructor(
    private readonly store: KeyedStore<KeyQueue>,
    private readonly scope: CoordinationScope,
    private readonly hash: string,
    private readonly concurrency: number,
  ) {}

  get waiting(): number {
    return this.waiters.size
  }

  admit(ctx: CoordinationContext, task: Task<unknown>): Promise<unknown> {
    this.inFlight++
    this.scope.host.onSettled(task, () => {
      this.inFlight--
      this.pump()
    })
    return ctx.proceed()
  }

  /** Releases waiters while there is room, then forgets the key if it is idle. */
  pump(): void {
    if (this.abandoned) return
    // A released body may settle synchronously and re-enter; the loop above it picks up the slack.
    if (this.pumping) return
    this.pumping = true
    try {
      while (this.inFlight < this.concurrency && this.waiters.size > 0) {
        const waiter = this.waiters.shift()!
        waiter.release(this.admit(waiter.ctx, internalsOf(waiter.ctx, 'serialize').task))
      }
    } finally {
      this.pumping = false
    }
    this.forgetIfIdle()
  }

  forgetIfIdle(): void {
    if (this.inFlight === 0 && this.waiters.size === 0) {
      this.store.delete(this.scope, this.hash, this)
    }
  }
}

/**
 * One FIFO per key: the first call proceeds; each later call parks
 * (`parked:coordinator`), emits `coordination:queued` with `position` =
 * waiters ahead of it, and proceeds when the one ahead settles — every call
 * runs, in call order. `concurrency` lets up to n per key run at once. A
 * waiter cancelled while parked leaves its queue at once. A key's queue is
 * deleted as soon as it is empty. Stateful: wire `dispose` into your
 * teardown so no waiter is left hanging.
 *
 * @example
 * ```ts
 * const serialize = createSerializeCoordinator()
 * const runtime = createRuntime({ plugins: [installCoordination] })
 * const save = (doc: Doc) => withCoordinator(() => putDoc(doc), serialize.coordinator, { key: ['doc', doc.id] })
 * run(runtime, save(v1))
 * run(runtime, save(v2)) // starts when v1's write has settled
 * // on teardown:
 * serialize.dispose()
 * ```
 */
const SERIALIZE_OPTIONS: readonly string[] = ['concurrency', 'name']

export function createSerializeCoordinator(options: SerializeOptions = {}): SerializeCoordinator {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(
      `createSerializeCoordinator(options): options must be an object such as { concurrency: 1 }, got ${describeValue(options)}.`,
    )
  }
  assertKnownKeys('createSerializeCoordinator(options)', options, SERIALIZE_OPTIONS)
  const concurrency = options.concurrency ?? 1
  if (typeof concurrency !== 'number') {
    throw new TypeError(
      `createSerializeCoordinator({ concurrency }): concurrency must be a number, got ${describeValue(concurrency)}.`,
    )
  }
  if (
    !(
      concurrency === Number.POSITIVE_INFINITY ||
      (Number.isInteger(concurrency) && concurrency >= 1)
    )
  ) {
    throw new RangeError(
      `createSerializeCoordinator({ concurrency }): concurrency must be an integer ≥ 1 (or Infinity), got ${concurrency}. Use 1 for one call at a time per key.`,
    )
  }
  if (
    options.name !== undefined &&
    (typeof options.name !== 'string' || options.name.trim() === '')
  ) {
    throw new TypeError(
      `createSerializeCoordinator({ name }): name must be a non-empty string, got ${describeValue(options.name)}. Leave it out for 'serialize'.`,
    )
  }
  const store = new KeyedStore<KeyQueue>()
  const hooked = new WeakSet<CoordinationScope>()
  let disposed = false

  const abandon = (scope?: CoordinationScope): KeyQueue[] => {
    const queues = store.takeAll(scope)
    for (const queue of queues) queue.abandoned = true
    return queues
  }

  const coordinator = defineCoordinator(options.name ?? 'serialize', (ctx) => {
    if (disposed) return ctx.intent.skip('shutdown')
    const { scope, task } = internalsOf(ctx, 'createSerializeCoordinator()')
    if (!hooked.has(scope)) {
      hooked.add(scope)
      scope.host.onPreCancel(() => {
        if (!disposed) abandon(scope)
      })
    }
    let queue = store.get(scope, ctx.hash)
    if (queue === undefined) {
      queue = new KeyQueue(store, scope, ctx.hash, concurrency)
      store.set(scope, ctx.hash, queue)
    }
    if (queue.waiters.size === 0 && queue.inFlight < concurrency) return queue.admit(ctx, task)
    ctx.intent.parkCoordinator()
    const position = queue.waiters.size
    const answer = deferred<unknown>()
    const node = queue.waiters.push({ ctx, release: answer.resolve })
    const waitingIn = queue
    scope.host.onSettled(task, () => {
      // Cancelled (or timed out) while parked: leave the queue now, not when
      // reached, and settle the answer as the task ended.
      if (!waitingIn.waiters.remove(node)) return
      waitingIn.forgetIfIdle()
      answer.resolve(endingOf(task))
    })
    ctx.emit({ type: 'coordination:queued', position })
    return answer.promise
  })

  return Object.freeze({
    coordinator,
    dispose(): void {
      if (disposed) return
      disposed = true
      for (const queue of abandon()) {
        for (const waiter of queue.waiters.drain()) {
          waiter.release(waiter.ctx.intent.skip('shutdown'))
        }
      }
    },
    resetAdmission(): void {
      abandon()
    },
  })
}
