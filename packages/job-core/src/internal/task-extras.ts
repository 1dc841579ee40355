import type { TimerHandle } from '../clock.js'
import type { Task } from '../task.js'
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
  settledCallbacks: Callbacks
  exitedCallbacks: Callbacks
  /** `timeout.total`, armed at run() and cleared when the task ends. */
  totalTimer: TimerHandle | undefined
  /** Removes the listener on `RunOptions.signal`. */
  detachSignal: (() => void) | undefined
  /** The timer of the parked stage (the retry delay). */
  stageTimer: TimerHandle | undefined
  /** What leaving the parked stage undoes (dependency listeners). */
  stageUndo: (() => void) | undefined
  /** Bodies of attempts that no longer decide the task (cancelled, timed out) and have not left yet. */
  staleBodies: number
  /** A retry whose delay passed while a timed-out attempt's body was still inside: it queues when that body leaves. */
  retryAfterStale: (() => void) | undefined
}

export function extrasOf(task: TaskRecord): TaskExtras {
  const slot = task.extrasSlot
  if (typeof slot === 'object') return slot
  const extras: TaskExtras = {
    parent: undefined,
    children: undefined,
    // A lone settle callback kept in the slot moves in.
    settledCallbacks: slot,
    exitedCallbacks: undefined,
    totalTimer: undefined,
    detachSignal: undefined,
    stageTimer: undefined,
    stageUndo: undefined,
    staleBodies: 0,
    retryAfterStale: undefined,
  }
  task.extrasSlot = extras
  return extras
}

/** The task's settle callbacks, detached (they run once): from its extras, or its lone one. */
export function takeSettledCallbacks(task: TaskRecord): Callbacks {
  const slot = task.extrasSlot
  if (slot === undefined) return undefined
  if (typeof slot === 'function') {
    task.extrasSlot = undefined
    return slot
  }
  const callbacks = slot.settledCallbacks
  slot.settledCallbacks = undefined
  return callbacks
}

/**
 * Callbacks the end of a task runs once. Most tasks that have any have one
 * (the plugin coordinating them), so one is kept as it is; an array — which
 * V8 gives room for 17 on its first push, about 150 B — only from the second.
 */
export type Callbacks = TaskCallback | TaskCallback[] | undefined

/** `callbacks` with `callback` added, last (or `first`). */
export function withCallback(
  callbacks: Callbacks,
  callback: TaskCallback,
  first = false,
): Callbacks {
  if (callbacks === undefined) return callback
  if (typeof callbacks === 'function') return first ? [callback, callbacks] : [callbacks, callback]
  if (first) callbacks.unshift(callback)
  else callbacks.push(callback)
  return callbacks
}

/**
 * Adds `callback` to one of the task's callback lists (last) and returns its
 * remover, which takes out one occurrence.
 */
export function addCallback(
  task: TaskRecord,
  list: 'settledCallbacks' | 'exitedCallbacks',
  callback: TaskCallback,
): () => void {
  if (list === 'settledCallbacks' && task.extrasSlot === undefined) task.extrasSlot = callback
  else {
    const extras = extrasOf(task)
    extras[list] = withCallback(extras[list], callback)
  }
  return () => removeCallback(task, list, callback)
}

function removeCallback(
  task: TaskRecord,
  list: 'settledCallbacks' | 'exitedCallbacks',
  callback: TaskCallback,
): void {
  const slot = task.extrasSlot
  // The slot holds a function only as the lone settle callback.
  if (typeof slot === 'function') {
    if (list === 'settledCallbacks' && slot === callback) task.extrasSlot = undefined
  } else if (slot !== undefined) slot[list] = withoutCallback(slot[list], callback)
}

/** `callbacks` without one occurrence of `callback`. */
function withoutCallback(callbacks: Callbacks, callback: TaskCallback): Callbacks {
  if (callbacks === callback) return undefined
  if (callbacks === undefined || typeof callbacks === 'function') return callbacks
  const index = callbacks.indexOf(callback)
  if (index !== -1) callbacks.splice(index, 1)
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
export function runCallbacks(callbacks: Callbacks, handle: Task<unknown>): void {
  if (callbacks === undefined) return
  if (typeof callbacks === 'function') callbacks(handle)
  else for (const callback of callbacks) callback(handle)
}
