import type { Outcome } from '../../types/outcome.js'
import { settleOwn } from '../caller-promise.js'
import type { TaskRecord } from '../model.js'
import { releaseShaperHold } from '../shaping.js'
import { clearStageTimer, runCallbacks, takeCallbacks } from '../task-extras.js'
import type { TransitionExtra } from '../transition-event.js'
import { watchUnobserved } from '../unobserved-errors.js'

/**
 * Every ending of a task, from whichever stage. The task leaves its parked
 * stage and the live list, and its bodies still inside count as exiting,
 * before the terminal transition is told: a listener of that last event
 * reads true counts. Then its timers and its parent's children let go, the
 * caller's promise settles, and the settle callbacks run (children are
 * cancelled by the first of them). Runs once per task: callers check
 * `outcome` first.
 */
export function finish(task: TaskRecord, outcome: Outcome<unknown>, extra?: TransitionExtra): void {
  leaveStage(task)
  // A context kept for a body that will never start: dropped (a promise
  // door that is never opened holds nothing else).
  task.carrier = undefined
  task.outcome = outcome
  const core = task.core
  core.live.delete(task)
  core.exitingBodies += task.extras?.staleBodies ?? 0
  task.moveTo(outcome.status, extra)
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
  settleOwn(task, outcome)
  // Detached first: a remover called while they run finds nothing to remove.
  runCallbacks(takeCallbacks(task, 'settledCallbacks'), task.handle)
  core.shutdown?.taskSettled(outcome.status)
  bodyLeft(task)
  core.checkIdle()
}

/** Undoes the parked stage the task is in: its place in the backend, its timer, its listeners. */
export function leaveStage(task: TaskRecord): void {
  if (task.state === 'parked:shaper') releaseShaperHold(task)
  const waiting = task.waiting
  if (waiting !== undefined) {
    task.waiting = undefined
    task.core.backend.withdraw(waiting)
  }
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
  runCallbacks(takeCallbacks(task, 'exitedCallbacks'), task.handle)
}
