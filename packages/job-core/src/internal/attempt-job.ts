import type { BackendJob } from '../backend.js'
import type { TimerHandle } from '../clock.js'
import type { Task, TaskFn } from '../task.js'
import type { TaskContextImpl } from './task-context.js'
import { clearStageTimer } from './task-extras.js'
import type { TaskRecord } from './task-record.js'

/**
 * One attempt of a task: its body's context, timer and slot, and for a
 * retry also what the backend queues and starts (a first attempt waits in
 * the backend as the task's record and gets its job when it starts). An
 * attempt that no longer decides its task (cancelled, timed out) keeps its
 * slot until its body leaves: the honest slot.
 */
/** The task of a job, for the kernel (a backend sees only the public `BackendJob`). */
export let recordOfJob: (job: AttemptJob) => TaskRecord

export class AttemptJob implements BackendJob {
  readonly #task: TaskRecord
  /**
   * `waiting` for a slot; `started` once the backend granted one and the
   * kernel took it; `abandoned` once `abandonAfter` released its slot while
   * the body still runs; `exited` once the body left (returned, threw, or
   * never entered because the task ended first).
   */
  phase: 'waiting' | 'started' | 'abandoned' | 'exited' = 'waiting'
  /** The `timeout.attempt` timer while the body runs, then the abandon timer (`abandonAfter`). */
  timer: TimerHandle | undefined = undefined
  context: TaskContextImpl | undefined = undefined
  /**
   * What the backend was handed for this attempt and gets back in
   * `release`: the task's record for its first attempt (see
   * `TaskRecord.start`), this job for a retry.
   */
  readonly ticket: BackendJob

  static {
    recordOfJob = (job) => job.#task
  }

  constructor(task: TaskRecord, ticket?: BackendJob) {
    this.#task = task
    this.ticket = ticket ?? this
  }

  get task(): Task<unknown> {
    return this.#task.handle
  }

  get priority(): number {
    return this.#task.options.priority
  }

  get taskFn(): TaskFn<unknown> {
    return this.#task.taskFn
  }

  /** The backend grants a slot: the task runs its execute stage, or gives the slot straight back. */
  start(): void {
    const task = this.#task
    if (task.job !== this || this.phase !== 'waiting') {
      // Withdrawn after the backend picked it.
      task.core.backend.release(this)
      return
    }
    this.phase = 'started'
    // The queue timeout, if any.
    clearStageTimer(task)
    task.core.advance(task)
  }

  /** Runs the pipeline for this job's task again (after a retry delay). */
  resume(): void {
    const task = this.#task
    task.core.advance(task)
  }

  /** Leaves the backend's queue before starting (its queue timeout is the task's, cleared with the stage). */
  withdraw(): void {
    this.#task.core.backend.withdraw(this)
  }

  /** This attempt no longer decides its task: its signal aborts; its body keeps the slot until it leaves. */
  abandon(reason: unknown): void {
    this.clearTimer()
    this.context?.abort(reason)
  }

  clearTimer(): void {
    if (this.timer !== undefined) {
      this.#task.core.clock.clearTimeout(this.timer)
      this.timer = undefined
    }
  }
}
