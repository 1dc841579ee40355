import type { CancelReason, TaskState } from '@vega/job-core'

/**
 * What {@link useTaskState} shows of a task: a frozen object, replaced only
 * when one of its fields changes. `value` is set once the task ended in
 * `success`, `error` once it ended in `error`; the terminal state and its
 * value or error always arrive together.
 *
 * @example
 * ```ts fragment
 * const snapshot: Readonly<ShallowRef<TaskStateSnapshot<string> | undefined>> = useTaskState(task)
 * if (snapshot.value?.state === 'success') console.log(snapshot.value.value)
 * ```
 */
export interface TaskStateSnapshot<T = unknown> {
  readonly id: number
  readonly label: string | undefined
  readonly state: TaskState
  /** Set exactly when `state === 'cancelled'`. */
  readonly cancelReason: CancelReason | undefined
  /** The task whose coordination or shaping cancelled this one, when there is one. */
  readonly cancelledBy: number | undefined
  /** The current or last attempt, 1-based; 0 before the first start. */
  readonly attempt: number
  /** The body's result, once the task ended in `success`. */
  readonly value: T | undefined
  /** The error the task ended with, once it ended in `error`. */
  readonly error: unknown
}
