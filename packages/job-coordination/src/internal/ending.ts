import { type Outcome, settle, type Task } from '@vega/job-core'

/** A promise that settles as `task` ended: its value, or its error (a `CancelledError` when cancelled). */
export function endingOf(task: Task<unknown>): Promise<unknown> {
  return settle(task).then(ownResult)
}

function ownResult(outcome: Outcome<unknown>): unknown {
  if (outcome.status === 'success') return outcome.value
  throw outcome.error
}
