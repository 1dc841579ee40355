import { abandonedBodyExited, armAbandon } from '../abandon.js'
import {
  abortAttempt,
  clearTimer,
  hasEntered,
  markEntered,
  phaseOf,
  queuedOf,
  recordOfJob,
  setPhase,
  setTimer,
  takeCarrier,
} from '../attempt-job.js'
import { enterThroughWrappers } from '../attempt-wrappers.js'
import { captureContext, enterSnapshot, takeSnapshot } from '../context-carrier.js'
import type { AttemptJob, TaskRecord } from '../model.js'
import { isThenable } from '../promises.js'
import { parkForRetry, retryDelay, staleBodyLeft } from '../retry.js'
import { armTimeout, extrasOf } from '../task-extras.js'
import { bodyLeft, finish } from './settle.js'
import type { StageResult } from './stage.js'

/**
 * The backend granted the attempt a slot: the task runs. A task that waited
 * enters its body through its context carrier, so the body runs in the
 * async context of its `run()` call; one that starts inside `run()` enters
 * at once.
 */
export function execute(task: TaskRecord): StageResult {
  const job = task.job!
  task.attempt++
  // Counted before the transition is told: a listener sees its body running.
  task.core.runningBodies++
  task.moveTo('running')
  const carrier = takeCarrier(job)
  if (carrier === undefined) enterBody(job)
  else if (typeof carrier === 'function') carrier(job)
  else enterSnapshot(carrier, enterBody, job)
  return 'parked'
}

/** Calls the body of `job`'s task, unless the task ended while the attempt waited to enter. */
export function enterBody(job: AttemptJob): void {
  const task = recordOfJob(job)
  if (task.job !== job) {
    bodyExited(job, undefined, false)
    return
  }
  markEntered(job)
  const limit = task.options.timeouts?.attempt
  // Armed from inside the body's context, so a retry it causes keeps that context.
  if (limit !== undefined) armAttemptTimeout(task, job, limit)
  let result: unknown
  // Called as a plain function: `task.body(job)` would hand a `function`
  // body the task's record as `this`. The attempt is the body's ctx.
  const body = task.body
  const wrappers = task.core.attemptWrappers
  try {
    result = wrappers === undefined ? body(job) : enterThroughWrappers(wrappers, task, job)
  } catch (error) {
    bodyExited(job, error, true)
    return
  }
  if (isThenable(result)) {
    result.then(
      (value) => bodyExited(job, value, false),
      (error) => bodyExited(job, error, true),
    )
  } else {
    bodyExited(job, result, false)
  }
}

// Its own function, so the context the body's reactions share holds only the job.
function armAttemptTimeout(task: TaskRecord, job: AttemptJob, limit: number): void {
  setTimer(
    job,
    armTimeout(task, 'attempt', limit, (error) => {
      setTimer(job, undefined)
      if (task.job !== job) return
      abortAttempt(job, error)
      armAbandon(task, job)
      attemptFailed(task, job, error)
    }),
  )
}

/**
 * The body of `job` left (or never entered). If the attempt still decides
 * its task, its result settles the attempt; else `task:exited` reports
 * what the late body did. Either way its slot is released now.
 */
function bodyExited(job: AttemptJob, value: unknown, threw: boolean): void {
  const phase = phaseOf(job)
  if (phase === 'exited') return
  setPhase(job, 'exited')
  clearTimer(job)
  const task = recordOfJob(job)
  if (phase === 'abandoned') {
    // Uncounted and its slot released when it was abandoned.
    abandonedBodyExited(task, value, threw)
    return
  }
  const core = task.core
  // The body left: it stops counting before whatever its leaving causes is
  // told (the ending, the retry, task:exited), and the runtime is not idle
  // until its slot is back. Exiting: a body whose task had already ended
  // (counts().exiting).
  core.runningBodies--
  core.slotsToRelease++
  if (task.outcome !== undefined) core.exitingBodies--
  if (task.job === job) {
    task.job = undefined
    if (threw) attemptFailed(task, job, value)
    else finish(task, { status: 'success', value })
  } else {
    staleBodyLeft(task)
    if (hasEntered(job) && core.bus.active) {
      core.bus.emit(
        threw
          ? { type: 'task:exited', taskId: task.id, threw: value }
          : { type: 'task:exited', taskId: task.id },
      )
    }
  }
  bodyLeft(task)
  core.backend.release(queuedOf(job))
  core.slotsToRelease--
  core.checkIdle()
}

/** An attempt failed: another one follows after the retry delay, or the task ends in `error`. */
function attemptFailed(task: TaskRecord, job: AttemptJob, error: unknown): void {
  if (task.job === job) {
    // Timed out: the body is still inside, holding its slot, but no longer decides.
    task.job = undefined
    extrasOf(task).staleBodies++
  }
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
  task.carrier = takeSnapshot() ?? captureContext(enterBody)
  parkForRetry(task, delay, error)
}
