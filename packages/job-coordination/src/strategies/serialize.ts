import { createLaneCoordinator } from '../internal/lane-coordinator.js'
import type { StatefulCoordinator } from '../types.js'

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
 * What {@link createSerializeCoordinator} returns.
 *
 * @deprecated Use {@link StatefulCoordinator}, the same type (the return
 * shape of every `create*Coordinator`).
 * @example
 * ```ts
 * const serialize: SerializeCoordinator = createSerializeCoordinator()
 * ```
 */
export type SerializeCoordinator = StatefulCoordinator

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
 * teardown so no waiter is left hanging. Returns a {@link StatefulCoordinator}:
 * the coordinator itself, with `dispose` and `resetAdmission`.
 *
 * @example
 * ```ts
 * const serialize = createSerializeCoordinator()
 * const runtime = createRuntime({ plugins: [installCoordination] })
 * const save = (doc: Doc) => withCoordinator(() => putDoc(doc), serialize, { key: ['doc', doc.id] })
 * run(runtime, save(v1))
 * run(runtime, save(v2)) // starts once v1's write has ended and its body has left
 * // on teardown:
 * serialize.dispose()
 * ```
 */
export function createSerializeCoordinator(options: SerializeOptions = {}): StatefulCoordinator {
  return createLaneCoordinator(
    'createSerializeCoordinator',
    options,
    '{ concurrency: 1 }',
    'serialize',
    'queue',
  )
}
