import type { TimerHandle } from '../types/backend.js'
import type { Task } from '../types/task.js'
import type { TaskRecord } from './task-record.js'

/**
 * Called with the task's handle when it reaches a terminal state, or when
 * its last body has left. The handle, not the record: a plugin's callback
 * goes in the list as it is, without a wrapper per registration.
 */
export type TaskCallback = (task: Task<unknown>) => void

/**
 * What only some tasks need: a parent or children, callbacks, the timers and
 * listeners of a parked stage. One object, made on first use, so a plain
 * task pays one field for all of it.
 */
export interface TaskExtras {
  parent: TaskRecord | undefined
  children: Set<TaskRecord> | undefined
  /** Run once, in order, at the terminal transition (`host.onSettled`). */
  settledCallbacks: TaskCallback[] | undefined
  /** Run once, in order, when the task has ended and no body of it holds a slot (`host.onExited`). */
  exitedCallbacks: TaskCallback[] | undefined
  /** `timeout.total`, armed at run() and cleared when the task ends. */
  totalTimer: TimerHandle | undefined
  /** Removes the listener on `RunOptions.signal`. */
  detachSignal: (() => void) | undefined
  /** The timer of the parked stage (the retry delay, the queue timeout). */
  stageTimer: TimerHandle | undefined
  /** What leaving the parked stage undoes (dependency listeners). */
  stageUndo: (() => void) | undefined
  /** Bodies of attempts that no longer decide the task (cancelled, timed out) and have not left yet. */
  staleBodies: number
  /** A retry whose delay passed while a timed-out attempt's body was still inside: it queues when that body leaves. */
  retryAfterStale: (() => void) | undefined
}

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
  const callbacks = (extras[list] ??= [])
  if (first) callbacks.unshift(callback)
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

/** Runs `callbacks` once, in order, with the task's handle. */
export function runCallbacks(callbacks: TaskCallback[] | undefined, handle: Task<unknown>): void {
  if (callbacks === undefined) return
  for (const callback of callbacks) callback(handle)
}
