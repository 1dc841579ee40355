import type { Outcome } from '../../task.js'
import { phaseOf, ticketOf } from '../attempt-job.js'
import { OWN_HANDED_OUT, OWN_NOT_HANDED_OUT, settleOwn } from '../caller-promise.js'
import { releaseHold } from '../shaper-window.js'
import { clearStageTimer, runCallbacks, takeSettledCallbacks } from '../task-extras.js'
import type { TaskRecord } from '../task-record.js'
import type { TransitionExtra } from '../transition-event.js'
import { watchUnobserved } from '../unobserved-errors.js'

/**
 * Every ending of a task, from whichever stage: the terminal transition,
 * then everything the task held is let go — its parked stage, its timers,
 * its place among the live tasks and its parent's children — the caller's
 * promise settles, and the settle callbacks run (children are cancelled by
 * the first of them). Runs once per task: callers check `outcome` first.
 */
export function finish(task: TaskRecord, outcome: Outcome<unknown>, extra?: TransitionExtra): void {
  leaveStage(task)
  // Read before the transition: from then on the record's one slot for a
  // carrier, an attempt or an outcome holds the outcome.
  const carrier = task.carrier
  task.carrier = undefined
  task.moveTo(outcome.status, extra)
  task.outcome = outcome
  const core = task.core
  core.live.delete(task)
  core.exitingBodies += task.extras?.staleBodies ?? 0
  if (outcome.status === 'error') watchUnobserved(task)
  const extras = task.extras
  if (extras !== undefined) {
    if (extras.totalTimer !== undefined) {
      core.clock.clearTimeout(extras.totalTimer)
      extras.totalTimer = undefined
    }
    extras.detachSignal?.()
    extras.detachSignal = undefined
    extras.parent?.extras?.children?.delete(task)
  }
  // It waited and never entered a body. A snapshot holds nothing to settle
  // (the own promise, if made, settles below); through a promise door, an
  // own promise someone holds learns the outcome, and one nobody holds (a
  // merged call) is simply dropped: no microtask, no error built.
  if (typeof carrier === 'function') {
    if (task.resolveOwn === OWN_HANDED_OUT) carrier({ ended: task })
    else if (task.resolveOwn === OWN_NOT_HANDED_OUT) {
      task.own = undefined
      task.resolveOwn = undefined
    }
  }
  settleOwn(task, outcome)
  // Detached first: a remover called while they run finds nothing to remove.
  const callbacks = takeSettledCallbacks(task)
  if (callbacks !== undefined) runCallbacks(callbacks, task.handle)
  core.shutdown?.taskSettled(outcome.status)
  bodyLeft(task)
  core.checkIdle()
}

/** Undoes the parked stage the task is in: its place in the backend, its timer, its listeners. */
export function leaveStage(task: TaskRecord): void {
  if (task.state === 'parked:shaper') releaseHold(task)
  const job = task.job
  if (job !== undefined && phaseOf(job) === 'waiting') {
    task.job = undefined
    task.core.backend.withdraw(ticketOf(job))
  } else if (task.waitsAsTicket) task.core.backend.withdraw(task)
  const extras = task.extras
  if (extras === undefined) return
  extras.retryAfterStale = undefined
  clearStageTimer(task)
  const undo = extras.stageUndo
  if (undo !== undefined) {
    extras.stageUndo = undefined
    undo()
  }
}

/**
 * Runs the exit callbacks once the task has ended and no body of it holds
 * a slot any more (`host.onExited`).
 */
export function bodyLeft(task: TaskRecord): void {
  const extras = task.extras
  if (task.outcome === undefined || (extras !== undefined && extras.staleBodies !== 0)) return
  const callbacks = extras?.exitedCallbacks
  if (callbacks === undefined) return
  extras!.exitedCallbacks = undefined
  runCallbacks(callbacks, task.handle)
}
