import { failTask } from '../cancellation.js'
import type { TaskRecord } from '../model.js'
import { overflowed } from '../overflow.js'
import { enqueueAttempt } from '../queued-attempt.js'
import { armTimeout, extrasOf } from '../task-extras.js'
import { sinceOffsetAt } from '../task-record.js'
import type { StageResult } from './stage.js'

/**
 * Hands one attempt to the backend, which starts it (the execute stage)
 * when a slot is free — synchronously, inside `enqueue`, when one is free
 * now and nothing waits ahead. `timeout.queue` bounds the wait.
 */
export function queue(task: TaskRecord): StageResult {
  task.moveTo('queued')
  // A listener of that transition may have ended the task: nothing to enqueue.
  if (task.outcome !== undefined) return 'ended'
  const core = task.core
  const limit = task.options.timeouts?.queue
  if (limit !== undefined) armQueueTimeout(task, limit)
  enqueueAttempt(task)
  // Still waiting: the time it entered the queue (moveTo left it unread).
  if (task.sinceOffset === undefined && task.state === 'queued') {
    task.sinceOffset = sinceOffsetAt(core)
  }
  // Backpressure applies to new work only, once the backend has started what fits.
  if (core.queuedTasks > core.control.maxQueued && task.state === 'queued' && task.attempt === 0) {
    overflowed(task)
  }
  return 'parked'
}

// Its own function: a closure over queue()'s locals would cost every queued
// task a context, also without a queue timeout. The timer is the stage's,
// on the task, whichever ticket waits: a start or an ending clears it.
function armQueueTimeout(task: TaskRecord, limit: number): void {
  const extras = extrasOf(task)
  extras.stageTimer = armTimeout(task, 'queue', limit, (error) => {
    extras.stageTimer = undefined
    failTask(task, error)
  })
}
