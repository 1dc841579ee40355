import {
  isTerminalState,
  type Outcome,
  settle,
  type Task,
  watch as watchTask,
} from '@vega/job-core'
import type { TaskStateSnapshot } from '../task-state-snapshot.js'

/**
 * Follows one task: calls `onChange` with a new snapshot each time one of
 * its fields changed, from core's `watch` (no bus listener) and, for the
 * terminal one, from its outcome. The terminal state is published together
 * with its value or error (a few microtasks after the transition), so a
 * snapshot never says `success` without its `value`. Returns the current
 * snapshot and the stop.
 */
export function followTask<T>(
  task: Task<T>,
  onChange: (snapshot: TaskStateSnapshot<T>) => void,
): { readonly initial: TaskStateSnapshot<T>; readonly stop: () => void } {
  let outcome: Outcome<T> | undefined
  let current: TaskStateSnapshot<T> | undefined
  let stopped = false

  const read = (): TaskStateSnapshot<T> => {
    const state = task.state
    // Until the outcome is read, a terminal state shows as the last state seen.
    if (outcome === undefined && isTerminalState(state) && current !== undefined) return current
    const value = outcome?.status === 'success' ? outcome.value : undefined
    const error = outcome?.status === 'error' ? outcome.error : undefined
    // A task already ended when following starts shows its end at once, its value a few microtasks later.
    const next: TaskStateSnapshot<T> = {
      id: task.id,
      label: task.label,
      state,
      cancelReason: task.cancelReason,
      cancelledBy: task.cancelledBy,
      attempt: task.attempt,
      value,
      error,
    }
    if (
      current !== undefined &&
      current.state === next.state &&
      current.attempt === next.attempt &&
      current.cancelReason === next.cancelReason &&
      current.cancelledBy === next.cancelledBy &&
      Object.is(current.value, next.value) &&
      Object.is(current.error, next.error)
    ) {
      return current
    }
    current = Object.freeze(next)
    return current
  }

  const publish = (): void => {
    if (stopped) return
    const before = current
    const snapshot = read()
    if (snapshot !== before) onChange(snapshot)
  }

  const initial = read()
  const unwatch = watchTask(task, publish)
  // settle never rejects; reading the outcome marks the task observed (the snapshot shows its error).
  void settle(task).then((settled) => {
    outcome = settled
    publish()
  })
  return {
    initial,
    stop: () => {
      stopped = true
      unwatch()
    },
  }
}
