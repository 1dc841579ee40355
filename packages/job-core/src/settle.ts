import { toCore } from './internal/runtime-core.js'
import type { TaskRecord } from './internal/task-record.js'
import type { Outcome, Task } from './task.js'

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
  const record = task as unknown as TaskRecord<T>
  if (record === null || typeof record !== 'object' || typeof record.onSettled !== 'function') {
    throw new TypeError('settle(task): expected a task returned by run().')
  }
  toCore(record.runtime, 'settle(task)')
  return new Promise((resolve) => {
    record.onSettled(() => resolve(record.outcome!))
  })
}
