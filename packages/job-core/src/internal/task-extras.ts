import { TimeoutError } from '../errors.js'
import type { TimerHandle } from '../types/backend.js'
import type { TimeoutPhase } from '../types/task.js'
import type { TaskCallback, TaskExtras, TaskRecord } from './model.js'

/** The task's extras, made on first use. */
export function extrasOf(task: TaskRecord): TaskExtras {
  if (task.extras !== undefined) return task.extras
  const extras: TaskExtras = {
    parent: undefined,
    children: undefined,
    settledCallbacks: undefined,
    exitedCallbacks: undefined,
    totalTimer: undefined,
    detachSignal: undefined,
    stageTimer: undefined,
    stageUndo: undefined,
    staleBodies: 0,
    retryAfterStale: undefined,
    watchers: undefined,
  }
  task.extras = extras
  return extras
}

/** Which callback list of a task. */
export type CallbackList = 'settledCallbacks' | 'exitedCallbacks'

/**
 * Adds `callback` to one of the task's callback lists (last, or `first`) and
 * returns its remover, which takes out that one registration.
 */
export function addCallback(
  task: TaskRecord,
  list: CallbackList,
  callback: TaskCallback,
  first = false,
): () => void {
  const extras = extrasOf(task)
  const callbacks = extras[list]
  // Most tasks get one callback per list: an array literal holds exactly
  // one, where pushing onto an empty array reserves room for seventeen.
  if (callbacks === undefined) extras[list] = [callback]
  else if (first) callbacks.unshift(callback)
  else callbacks.push(callback)
  return () => {
    const current = extras[list]
    const index = current?.indexOf(callback) ?? -1
    if (index !== -1) current!.splice(index, 1)
  }
}

/** Takes one of the task's callback lists out (they run once). */
export function takeCallbacks(task: TaskRecord, list: CallbackList): TaskCallback[] | undefined {
  const extras = task.extras
  if (extras === undefined) return undefined
  const callbacks = extras[list]
  extras[list] = undefined
  return callbacks
}

/**
 * Clears the timer of the stage the task is parked in (a retry delay, a
 * queue timeout): when the stage is left, by an ending or by a start.
 */
export function clearStageTimer(task: TaskRecord): void {
  const extras = task.extras
  if (extras?.stageTimer === undefined) return
  task.core.clock.clearTimeout(extras.stageTimer)
  extras.stageTimer = undefined
}

/**
 * Arms the `phase` limit of `task` on the runtime clock: after `ms`,
 * `expire` receives the `TimeoutError` that says which limit passed. The
 * one place a timeout is armed, for `attempt`, `total` and `queue` alike.
 */
export function armTimeout(
  task: TaskRecord,
  phase: TimeoutPhase,
  ms: number,
  expire: (error: TimeoutError) => void,
): TimerHandle {
  return task.core.clock.setTimeout(() => expire(new TimeoutError(phase, ms, task.id)), ms)
}
