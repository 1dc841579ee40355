import type { Outcome } from '../../types/outcome.js'
import { settleOwn } from '../caller-promise.js'
import type { TaskRecord } from '../model.js'
import { releaseShaperHold } from '../shaping.js'
import { clearStageTimer, runCallbacks, takeCallbacks } from '../task-extras.js'
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
  const refused = leaveStage(task)
  if (refused !== undefined) {
    // The backend threw from withdraw: the ending says so.
    outcome = { status: 'error', error: refused.error }
    extra = { error: refused.error }
  }
  // A context kept for a body that will never start: dropped (a promise
  // door that is never opened holds nothing else).
  task.carrier = undefined
  task.moveTo(outcome.status, extra)
  task.outcome = outcome
  const core = task.core
  core.live.delete(task)
  core.bodies.taskEnded(task)
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

/**
 * Undoes the parked stage the task is in: its place in the backend, its
 * timer, its listeners. Returns what the backend threw from `withdraw`, if
 * it did.
 */
export function leaveStage(task: TaskRecord): { readonly error: unknown } | undefined {
  if (task.state === 'parked:shaper') releaseShaperHold(task)
  const waiting = task.waiting
  let refused: { readonly error: unknown } | undefined
  if (waiting !== undefined) {
    task.waiting = undefined
    refused = waiting.withdraw()
  }
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
 * Runs the exit callbacks once the task has ended and no body of it holds
 * a slot any more (`host.onExited`).
 */
export function bodyLeft(task: TaskRecord): void {
  const extras = task.extras
  if (task.outcome === undefined || (extras !== undefined && extras.staleBodies !== 0)) return
  runCallbacks(takeCallbacks(task, 'exitedCallbacks'), task.handle)
}
