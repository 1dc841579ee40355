import { defineCoordinator } from '../define-coordinator.js'
import { KeyLanes } from '../internal/key-lanes.js'
import { resolveLaneOptions } from '../internal/lane-options.js'
import type { Coordinator } from '../types.js'

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
   * Abandons the current generation of waiters: they are never released
   * (they stay parked until cancelled, or skipped by `dispose()`), and the
   * next call of any key does not queue behind them. Bodies still inside keep
   * their slots, so the next call still never overlaps one of them.
   * `cancelAll(runtime)` runs it for you (it is a pre-cancel hook of every
   * runtime the coordinator serves), so the waiters it cancels never start on
   * the way out.
   */
  resetAdmission(): void
}

/**
 * One FIFO per key: the first call proceeds; each later call parks
 * (`parked:coordinator`), emits `coordination:queued` with `position` =
 * waiters ahead of it, and proceeds when the one ahead has ended **and its
 * body has exited** — every call runs, in call order, and two bodies of one
 * key never overlap, even when the one ahead was cancelled or timed out and
 * ignores its signal (it keeps its turn until it leaves, like the kernel's
 * honest slot). `concurrency` lets up to n bodies per key run at once. A
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
 * run(runtime, save(v2)) // starts once v1's write has ended and its body has left
 * // on teardown:
 * serialize.dispose()
 * ```
 */
export function createSerializeCoordinator(options: SerializeOptions = {}): SerializeCoordinator {
  const { concurrency, name } = resolveLaneOptions(
    'createSerializeCoordinator',
    options,
    '{ concurrency: 1 }',
    'serialize',
  )
  const lanes = new KeyLanes('createSerializeCoordinator()', concurrency, 'queue')
  let disposed = false

  const coordinator = defineCoordinator(name, (ctx) =>
    disposed ? ctx.intent.skip('shutdown') : lanes.coordinate(ctx),
  )

  return Object.freeze({
    coordinator,
    dispose(): void {
      if (disposed) return
      disposed = true
      for (const waiter of lanes.drain()) waiter.answer.resolve(waiter.ctx.intent.skip('shutdown'))
    },
    resetAdmission(): void {
      lanes.abandon()
    },
  })
}
