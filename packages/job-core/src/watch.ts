import { recordOf } from './internal/record-of.js'
import { addWatcher } from './internal/task-watchers.js'
import { describeValue } from './internal/validate.js'
import type { TaskTransitionEvent } from './types/events.js'
import type { Task } from './types/task.js'

/**
 * Calls `listener` with each later `task:transition` of one task, the event
 * the bus delivers, up to and including its terminal one; then the listener
 * is removed. For bindings (a UI that shows one task) that need no plugin:
 *
 * - the runtime has moved when the listener runs: `counts()`, `inspect()`
 *   and the task's handle agree with the event;
 * - watching never observes the task: a failure nobody awaits is still
 *   reported by `onUnobservedError`;
 * - a watched task's transitions reach its watchers in the order they
 *   happened, also when a listener causes one (it is told after the
 *   current event), so the terminal event is the last;
 * - a task that has already ended has nothing left to tell: the listener
 *   is never called, and the returned function does nothing. Read
 *   `task.state` first to show where it stands.
 *
 * A listener that throws is reported like a bus listener
 * (`runtime:listener-error`, or the console when nobody listens) and stays
 * watching. Returns the function that stops watching; after it returns,
 * the listener is not called again.
 *
 * @example
 * ```ts
 * const task = run(runtime, work)
 * let state = task.state
 * const stop = watch(task, (e) => {
 *   state = e.to // 'queued', 'running', …, then 'success'
 * })
 * stop() // or let it end with the task
 * ```
 */
export function watch<T>(
  task: Task<T>,
  listener: (event: TaskTransitionEvent) => void,
): () => void {
  const record = recordOf(task)
  if (record === undefined) {
    throw new TypeError(
      `watch(task, listener): task must be a task returned by run(), got ${describeValue(task)}.`,
    )
  }
  if (typeof listener !== 'function') {
    throw new TypeError(
      `watch(task, listener): listener must be a function (event) => void, got ${describeValue(listener)}.`,
    )
  }
  return addWatcher(record, listener)
}
