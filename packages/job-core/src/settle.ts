import { recordOf } from './internal/record-of.js'
import { onSettled } from './internal/task-callbacks.js'
import type { Outcome } from './types/outcome.js'
import type { Task } from './types/task.js'

/**
 * Waits for the task to reach a terminal state and reports how it ended.
 * Never rejects. It reports the task's own ending: a deduped task is
 * `cancelled` even though its promise resolves with the peer's value.
 *
 * @example
 * ```ts
 * const outcome = await settle(run(runtime, work))
 * if (outcome.status === 'cancelled') console.log(outcome.reason)
 * ```
 */
export function settle<T>(task: Task<T>): Promise<Outcome<T>> {
  const record = recordOf(task)
  if (record === undefined) {
    throw new TypeError('settle(task): expected a task returned by run().')
  }
  record.observed = true
  return new Promise((resolve) => {
    onSettled(record, () => resolve(record.outcome as Outcome<T>))
  })
}
