import type { Runtime } from '@vega/job-core'
import { scopeOfRuntime } from './internal/scope.js'

/**
 * Sizes of coordination's per-runtime state, from {@link inspectCoordination}.
 *
 * @example
 * ```ts
 * const { keys, waiters }: CoordinationInspection = inspectCoordination(runtime)
 * ```
 */
export interface CoordinationInspection {
  /** Whether `installCoordination` is installed in the runtime. */
  readonly installed: boolean
  /** Keys with at least one live coordinated task (in the peer index, or in a serialize or keepLatest lane). */
  readonly keys: number
  /** Coordinated tasks a coordinator decided that have not settled yet. */
  readonly tasks: number
  /** Keys holding strategy state (serialize queues, keepLatest slots). */
  readonly strategyKeys: number
  /** Calls parked by a strategy, waiting to be released. */
  readonly waiters: number
}

/**
 * Reports how much coordination state a runtime holds. Every count follows
 * live keys: once every coordinated task has settled, all are zero, however
 * many keys were seen. Use it in leak tests and devtools.
 *
 * @example
 * ```ts
 * await Promise.allSettled(tasks)
 * inspectCoordination(runtime) // { installed: true, keys: 0, tasks: 0, strategyKeys: 0, waiters: 0 }
 * ```
 */
export function inspectCoordination(runtime: Runtime): CoordinationInspection {
  if (runtime === null || typeof runtime !== 'object') {
    throw new TypeError(
      `inspectCoordination(runtime): expected a runtime from createRuntime(), got ${runtime === null ? 'null' : typeof runtime}.`,
    )
  }
  const scope = scopeOfRuntime(runtime)
  if (scope === undefined) {
    return { installed: false, keys: 0, tasks: 0, strategyKeys: 0, waiters: 0 }
  }
  const { keys, tasks } = scope.sizes()
  let strategyKeys = 0
  let waiters = 0
  for (const states of scope.stores.values()) {
    strategyKeys += states.size
    for (const state of states.values()) waiters += state.waiting
  }
  return { installed: true, keys, tasks, strategyKeys, waiters }
}
