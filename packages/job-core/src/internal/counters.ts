import type { TaskState } from '../types/task.js'
import type { QueueWaiter, RuntimeCore } from './model.js'

/**
 * Keeps `core.queuedTasks` and `core.runningTasks` true as a task moves from
 * `from` to `to` (called by `TaskRecord.moveTo`, the one place state changes),
 * and wakes `whenQueueBelow` waiters when the queue shrinks. Two compares per
 * transition; nothing is allocated.
 */
export function countMove(core: RuntimeCore, from: TaskState, to: TaskState): void {
  if (from === 'queued') {
    core.queuedTasks--
    if (core.queueWaiters !== undefined) wakeQueueWaiters(core)
  } else if (from === 'running') core.runningTasks--
  if (to === 'queued') core.queuedTasks++
  else if (to === 'running') core.runningTasks++
}

/** Resolves at once when `queued < below`, else when it gets there. */
export function waitForQueueBelow(core: RuntimeCore, below: number): Promise<void> {
  if (core.queuedTasks < below) return Promise.resolve()
  return new Promise((resolve) => {
    ;(core.queueWaiters ??= []).push({ below, resolve })
  })
}

function wakeQueueWaiters(core: RuntimeCore): void {
  const queued = core.queuedTasks
  const waiters = core.queueWaiters!
  let kept: QueueWaiter[] | undefined
  for (const waiter of waiters) {
    if (queued < waiter.below) waiter.resolve()
    else (kept ??= []).push(waiter)
  }
  core.queueWaiters = kept
}
