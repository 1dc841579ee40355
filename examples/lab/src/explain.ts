import type { StrategyName } from './strategies.js'

/**
 * The one line that makes the lanes readable, shown before the first one:
 * what each glyph of the terminal swimlane stands for.
 */
export const LANE_LEGEND =
  'one row per call, time left to right: = running  ~ parked (waiting)  . queued  o success  x cancelled  ! error  - a cancelled body still inside'

/**
 * Why a call can end `cancelled` while its promise resolves: the task's
 * state says what happened to that call's own body, the promise what its
 * caller receives.
 */
export const MERGED_CALLS =
  'A call merged into another ends "cancelled" (its own body never ran) yet its promise resolves with the other call\'s value: the task state says what happened to the call, the promise what its caller gets.'

/**
 * What a user would pick each strategy for, and what happens to the calls it
 * does not run; one sentence each, shown under the strategy's heading.
 */
export const STRATEGY_EXPLANATIONS: Readonly<Record<StrategyName, string>> = {
  none: 'Plain run(): every call runs its own body. Use it when calls with the same key are independent.',
  dedupe:
    "One body per key at a time; later calls join the one in flight. Use it for reads (load a user, fetch a document): a joined call ends cancelled (dedupe) but resolves with the running call's value, the same answer it would have fetched.",
  restart:
    'The newest call wins: it cancels the call in flight (abort, by the newer call). Use it for search-as-you-type, where an older answer is stale; a restarted call rejects with CancelledError because its answer would be wrong.',
  serialize:
    'Every call runs, one at a time per key, in call order. Use it for writes that must neither overlap nor be reordered (saving a document); nothing is merged, so every promise resolves with its own value.',
  exhaust:
    'While one call runs, new calls are dropped. Use it for a submit button that must not fire twice; a dropped call rejects (exhaust-dropped), so its caller knows the click did nothing.',
  keepLatest:
    "One call runs; only the newest waits behind it, replacing any older waiter. Use it for autosave: never two writes at once, and the latest state is always written; a replaced call ends cancelled (superseded) but resolves with the newest call's value, because that write includes its changes.",
  bounded:
    'Hand-written with defineCoordinator: at most N bodies per key at once; further calls reuse the earliest one in flight. Use it to cap the load on a slow backend; a reusing call ends cancelled (dedupe) but resolves with the value of the call it reused.',
  forgetful:
    "Hand-written and wrong on purpose: it decides nothing. The runtime's orphan guard ends each call cancelled (orphaned-intent) and resolves its promise with what the coordinator returned (undefined), so no caller waits forever.",
}

/** The explanation of one strategy, with a `bounded` limit filled in. */
export function explainStrategy(name: StrategyName, limit?: number): string {
  const text = STRATEGY_EXPLANATIONS[name]
  return name === 'bounded' && limit !== undefined
    ? text.replace('at most N', `at most ${limit}`)
    : text
}
