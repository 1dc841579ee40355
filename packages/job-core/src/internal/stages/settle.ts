import type { Outcome } from '../../types/outcome.js'
import { withdrawWaiting } from '../backend-seam.js'
import { settleOwn } from '../caller-promise.js'
import { runTaskCallbacks, tellClaimExited, tellClaimSettled } from '../ending-hooks.js'
import type { TaskRecord } from '../model.js'
import { releaseShaperHold } from '../shaping.js'
import { clearStageTimer, takeCallbacks } from '../task-extras.js'
import type { TransitionExtra } from '../transition-event.js'
import { watchUnobserved } from '../unobserved-errors.js'

/**
 * Every ending of a task, from whichever stage. The task leaves its parked
 * stage and the live list, and its bodies still inside count as exiting,
 * before the terminal transition is told: a listener of that last event
 * reads true counts. Then its timers and its parent's children let go, the
 * caller's promise settles, the deciding claim's `onSettled` runs, then the
 * settle callbacks (children are cancelled by the first of them). Runs once
 * per task: callers check `outcome` first.
 */
export function finish(task: TaskRecord, outcome: Outcome<unknown>, extra?: TransitionExtra): void {
  const refused = leaveStage(task)
  if (refused !== undefined) {
    // The backend threw from withdraw: the ending says so.
    outcome = { status: 'error', error: refused.error }
    extra = { error: refused.error }
  }
  // A context kept for a body that will never start: dropped (a promise
  // door that is never opened holds nothing else).
  task.carrier = undefined
  task.outcome = outcome
  const core = task.core
  core.live.delete(task)
  core.bodies.taskEnded(task)
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
  const settledCallbacks = takeCallbacks(task, 'settledCallbacks')
  tellClaimSettled(task)
  runTaskCallbacks(settledCallbacks, task, 'a host.onSettled callback')
  core.shutdown?.taskSettled(outcome.status)
  bodyLeft(task)
  core.checkIdle()
}

/**
 * Undoes the parked stage the task is in: its place in the backend, its
 * timer, its listeners. Returns what the backend threw from `withdraw`, if
 * it did.
 */
export function leaveStage(task: TaskRecord): { readonly error: unknown } | undefined {
  if (task.state === 'parked:shaper') releaseShaperHold(task)
  const refused = withdrawWaiting(task)
  const extras = task.extras
  if (extras === undefined) return refused
  clearStageTimer(task)
  const undo = extras.stageUndo
  if (undo !== undefined) {
    extras.stageUndo = undefined
    undo()
  }
  return refused
}

/**
 * Tells the task's exit once it has ended and no body of it holds a slot
 * any more: the deciding claim's `onExited`, then `host.onExited`'s callbacks.
 */
export function bodyLeft(task: TaskRecord): void {
  const extras = task.extras
  if (task.outcome === undefined || (extras !== undefined && extras.staleBodies !== 0)) return
  tellClaimExited(task)
  runTaskCallbacks(takeCallbacks(task, 'exitedCallbacks'), task, 'a host.onExited callback')
}
