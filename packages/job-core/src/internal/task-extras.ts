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
  settledCallbacks: TaskCallback[] | undefined
  exitedCallbacks: TaskCallback[] | undefined
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
  let extras = task.extras
  if (extras === undefined) {
    extras = {
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
  }
  return extras
}

/** Adds `callback` to a list that the end of the task runs once; returns its remover. */
export function addCallback(list: TaskCallback[], callback: TaskCallback): () => void {
  list.push(callback)
  return () => {
    const index = list.indexOf(callback)
    if (index !== -1) list.splice(index, 1)
  }
}
