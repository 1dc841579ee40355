import { TimeoutError } from '../errors.js'
import type { TimerHandle } from '../types/backend.js'
import type { TimeoutPhase } from '../types/task.js'
import type { TaskRecord } from './model.js'

/**
 * Arms the `phase` limit of `task` on the runtime clock: after `ms`,
 * `expire` receives the `TimeoutError` that says which limit passed. The
 * one place a timeout is armed, for `attempt`, `total` and `queue` alike.
 */
export function armTimeout(
  task: TaskRecord,
  phase: TimeoutPhase,
  ms: number,
  expire: (error: TimeoutError) => void,
): TimerHandle {
  return task.core.clock.setTimeout(() => expire(new TimeoutError(phase, ms, task.id)), ms)
}
