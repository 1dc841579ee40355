import type { Attempt } from '../attempt.js'
import { captureContext, enterSnapshot, takeSnapshot } from '../context-carrier.js'
import type { TaskRecord } from '../model.js'
import { parkForRetry, retryDelay } from '../retry.js'
import { finish } from './settle.js'
import type { StageResult } from './stage.js'

/**
 * The backend granted the attempt a slot (`Attempt.start`): the task runs.
 * A task that waited enters its body through its context carrier, so the
 * body runs in the async context of its `run()` call; one that starts
 * inside `run()` enters at once. The attempt owns the body from here.
 */
export function execute(task: TaskRecord): StageResult {
  const attempt = task.job!
  task.attempt++
  task.moveTo('running')
  const carrier = attempt.carrier
  attempt.carrier = undefined
  if (carrier === undefined) attempt.enter()
  else if (typeof carrier === 'function') carrier(attempt)
  else enterSnapshot(carrier, enterAttempt, attempt)
  return 'parked'
}

/** What a context carrier runs for a body that starts later. */
export function enterAttempt(attempt: Attempt): void {
  attempt.enter()
}

/** The body of the attempt that decides `task` returned `value`. */
export function attemptSucceeded(task: TaskRecord, value: unknown): void {
  finish(task, { status: 'success', value })
}

/** An attempt failed: another one follows after the retry delay, or the task ends in `error`. */
export function attemptFailed(task: TaskRecord, error: unknown): void {
  let delay: number | undefined
  try {
    delay = retryDelay(task, error)
  } catch (policyError) {
    // A retryIf or delay that throws (or a delay that is not a duration) ends
    // the task with that error: the policy is broken, and nothing may hang.
    finish(task, { status: 'error', error: policyError }, { error: policyError })
    return
  }
  if (delay === undefined) {
    finish(task, { status: 'error', error }, { error })
    return
  }
  // Still in the failed body's context: the next attempt enters through it.
  task.carrier = takeSnapshot() ?? captureContext(enterAttempt)
  parkForRetry(task, delay, error)
}
