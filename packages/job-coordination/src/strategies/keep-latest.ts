import { createLaneCoordinator } from '../internal/lane-coordinator.js'
import type { Coordinator, StatefulCoordinator } from '../types.js'

/**
 * Options of {@link createKeepLatestCoordinator}.
 *
 * @example
 * ```ts
 * const options: KeepLatestOptions = { concurrency: 2, name: 'autosave' }
 * ```
 */
export interface KeepLatestOptions {
  /** How many bodies per key may run at once; a positive integer or `Infinity`. Default 1. */
  concurrency?: number
  /** The coordinator's name in diagnostic events; default `'keepLatest'`. */
  name?: string
}

/**
 * Up to `concurrency` running and at most one waiting per key
 * (ember-concurrency's `keepLatest` with `maxConcurrency`): a call that finds
 * every slot of its key taken waits (`parked:coordinator`,
 * `coordination:queued` with position 0); a newer call supersedes the
 * waiting one, which ends `cancelled` / `superseded` with `cancelledBy` = the
 * newer call and whose promise settles with the newer call's outcome. The
 * waiting call starts once a running call has ended **and its body has
 * exited** — a cancelled or timed-out body that ignores its signal keeps its
 * slot — so never more than `concurrency` bodies of one key run at once.
 * Throws `TypeError` / `RangeError` for bad options. Returns a
 * {@link StatefulCoordinator}, like `createSerializeCoordinator`: wire its
 * `dispose` into your teardown so no waiter is left hanging.
 *
 * @example
 * ```ts
 * const uploads = createKeepLatestCoordinator({ concurrency: 2 })
 * const sync = (state: State) =>
 *   withCoordinator(() => pushState(state), uploads, { key: ['sync', state.id] })
 * run(runtime, sync(s1)) // runs
 * run(runtime, sync(s2)) // runs: two slots
 * run(runtime, sync(s3)) // waits… then superseded by s4, and resolves with s4's result
 * run(runtime, sync(s4)) // runs when s1 or s2 has finished and left
 * ```
 */
export function createKeepLatestCoordinator(options: KeepLatestOptions = {}): StatefulCoordinator {
  return createLaneCoordinator(
    'createKeepLatestCoordinator',
    options,
    '{ concurrency: 2 }',
    'keepLatest',
    'latest',
  )
}

/**
 * One running and at most one waiting per key: a call arriving while another
 * runs waits (`parked:coordinator`, `coordination:queued` with position 0);
 * a newer call supersedes the waiting one, which ends `cancelled` /
 * `superseded` with `cancelledBy` = the newer call and whose promise settles
 * with the newer call's outcome. The waiting call starts once the running
 * one has ended and its body has exited, so two bodies of one key never
 * overlap. Nothing is lost that matters: the first and the latest calls
 * always run. Use it for autosave: never two writes at once, always the
 * latest state written. `createKeepLatestCoordinator({ concurrency })` allows
 * n running per key, and gives a coordinator of your own to `dispose()`
 * (this shared one has no owner to dispose it).
 *
 * @example
 * ```ts
 * const autosave = (draft: Draft) =>
 *   withCoordinator(() => putDraft(draft), keepLatestCoordinator, { key: ['draft', draft.id] })
 * run(runtime, autosave(v1)) // runs
 * run(runtime, autosave(v2)) // waits… then superseded by v3, and resolves with v3's result
 * run(runtime, autosave(v3)) // runs when v1 has finished and left
 * ```
 */
export const keepLatestCoordinator: Coordinator = createKeepLatestCoordinator()
