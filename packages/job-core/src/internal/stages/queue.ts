import { RetryTicket } from '../attempt-job.js'
import { failTask } from '../cancellation.js'
import { overflowed } from '../overflow.js'
import { sinceOffsetAt } from '../since-offset.js'
import { extrasOf } from '../task-extras.js'
import type { TaskRecord } from '../task-record.js'
import { armTimeout } from '../timeouts.js'
import { type Advance, EXECUTE, type StageResult } from './stage.js'

/**
 * Hands one attempt to the backend, which starts it (the execute stage)
 * when a slot is free — synchronously, inside `enqueue`, when one is free
 * now and nothing waits ahead. `timeout.queue` bounds the wait.
 */
export function queue(task: TaskRecord, _advance: Advance): StageResult {
  task.moveTo('queued')
  // A listener of that transition may have ended the task: nothing to enqueue.
  if (task.outcome !== undefined) return 'ended'
  task.stage = EXECUTE
  const core = task.core
  const limit = task.options.timeouts?.queue
  if (limit !== undefined) armQueueTimeout(task, limit)
  if (task.attempt === 0) {
    // The first attempt waits as the record itself (see TaskRecord.start).
    core.backend.enqueue(task)
  } else {
    const ticket = new RetryTicket(task)
    task.job = ticket.job
    core.backend.enqueue(ticket)
  }
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
