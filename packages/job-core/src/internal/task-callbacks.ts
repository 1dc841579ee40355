import type { TaskCallback, TaskRecord } from './model.js'
import { addCallback } from './task-extras.js'

/** The remover of a callback that already ran. */
const alreadyRan = (): void => {}

/**
 * Calls `callback` synchronously when `task` reaches a terminal state, or at
 * once if it already has. Returns its remover.
 */
export function onSettled(task: TaskRecord, callback: TaskCallback): () => void {
  if (task.outcome !== undefined) {
    callback(task.handle)
    return alreadyRan
  }
  return addCallback(task, 'settledCallbacks', callback)
}

/**
 * Calls `callback` once `task` has ended and no body of it holds a slot,
 * or at once if that moment has passed. Returns its remover.
 */
export function onExited(task: TaskRecord, callback: TaskCallback): () => void {
  if (task.outcome !== undefined && (task.extras?.staleBodies ?? 0) === 0) {
    callback(task.handle)
    return alreadyRan
  }
  return addCallback(task, 'exitedCallbacks', callback)
}
