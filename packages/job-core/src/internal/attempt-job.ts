import type { TimerHandle } from '../types/backend.js'
import type { RunOptions, Task, TaskContext, TaskFn } from '../types/task.js'
import type { ContextCarrier, ContextSnapshot } from './context-carrier.js'
import type { QueuedAttempt } from './queued-attempt.js'
import { sleepOn } from './sleep.js'
import { clearStageTimer } from './task-extras.js'
import type { TaskRecord } from './task-record.js'

/**
 * `started` once the backend granted a slot and the kernel took it;
 * `abandoned` once `abandonAfter` released its slot while the body still
 * runs; `exited` once the body left (returned, threw, or never entered
 * because the task ended first).
 */
export type AttemptPhase = 'started' | 'abandoned' | 'exited'

/**
 * The async context of the task's `run()` call (or of a failed attempt, for
 * a retry), kept for a body that starts later: a snapshot, or a promise door.
 */
export type AttemptCarrier = ContextSnapshot | ContextCarrier<AttemptJob>

// The kernel's way into an attempt's private state (assigned in the class's
// static block below): a body holds the attempt as its `ctx` and must reach
// nothing but `TaskContext` through it.

/** The task of an attempt. */
export let recordOfJob: (job: AttemptJob) => TaskRecord
export let phaseOf: (job: AttemptJob) => AttemptPhase
export let setPhase: (job: AttemptJob, phase: AttemptPhase) => void
/** The body was called (an attempt can end before it enters: a cancel between grant and entry). */
export let hasEntered: (job: AttemptJob) => boolean
export let markEntered: (job: AttemptJob) => void
/** What the backend was handed for this attempt, and gets back in `release`. */
export let queuedOf: (job: AttemptJob) => QueuedAttempt
/** The `timeout.attempt` timer while the body runs, then the abandon timer (`abandonAfter`). */
export let setTimer: (job: AttemptJob, timer: TimerHandle | undefined) => void
export let clearTimer: (job: AttemptJob) => void
/** Aborts the attempt's signal with `reason` (a `CancelledError` or `TimeoutError`). Once. */
export let abortAttempt: (job: AttemptJob, reason: unknown) => void
/** The carrier the attempt enters its body through (once), or `undefined` to enter at once. */
export let takeCarrier: (job: AttemptJob) => AttemptCarrier | undefined

/**
 * The signal of an attempt, made on first use (most bodies never read it):
 * not read and not aborted yet, aborted before anyone read it, or read.
 */
type SignalState =
  | { readonly kind: 'unread' }
  | { readonly kind: 'aborted-unread'; readonly reason: unknown }
  | { readonly kind: 'read'; readonly controller: AbortController }

const UNREAD: SignalState = { kind: 'unread' }

/**
 * One attempt of a task, and the `ctx` its body receives: its signal, its
 * timer and its slot. Made when the backend grants the slot. An attempt
 * that no longer decides its task (cancelled, timed out) keeps its slot
 * until its body leaves: the honest slot. One object serves the body and
 * the kernel; the kernel's part is private.
 */
export class AttemptJob implements TaskContext {
  readonly taskId: number
  /** 1-based: the attempts of the task started before this one, plus one. */
  readonly attempt: number
  readonly #task: TaskRecord
  #phase: AttemptPhase = 'started'
  #entered = false
  #timer: TimerHandle | undefined = undefined
  readonly #queued: QueuedAttempt
  /** The task's carrier, held from the grant until the execute stage enters the body through it. */
  #carrier: AttemptCarrier | undefined
  #signal: SignalState = UNREAD

  static {
    recordOfJob = (job) => job.#task
    phaseOf = (job) => job.#phase
    setPhase = (job, phase) => {
      job.#phase = phase
    }
    hasEntered = (job) => job.#entered
    markEntered = (job) => {
      job.#entered = true
    }
    takeCarrier = (job) => {
      const carrier = job.#carrier
      job.#carrier = undefined
      return carrier
    }
    queuedOf = (job) => job.#queued
    setTimer = (job, timer) => {
      job.#timer = timer
    }
    clearTimer = (job) => {
      const timer = job.#timer
      if (timer !== undefined) {
        job.#timer = undefined
        job.#task.core.clock.clearTimeout(timer)
      }
    }
    abortAttempt = (job, reason) => {
      const signal = job.#signal
      if (signal.kind === 'unread') job.#signal = { kind: 'aborted-unread', reason }
      else if (signal.kind === 'read' && !signal.controller.signal.aborted) {
        signal.controller.abort(reason)
      }
    }
  }

  /** The backend granted `queued` a slot: the attempt takes over the task's carrier, if it waited with one. */
  constructor(task: TaskRecord, queued: QueuedAttempt) {
    this.#task = task
    this.taskId = task.id
    this.attempt = task.attempt + 1
    this.#queued = queued
    this.#carrier = task.carrier
    task.carrier = undefined
  }

  get signal(): AbortSignal {
    const state = this.#signal
    if (state.kind === 'read') return state.controller.signal
    const controller = new AbortController()
    if (state.kind === 'aborted-unread') controller.abort(state.reason)
    this.#signal = { kind: 'read', controller }
    return controller.signal
  }

  sleep(ms: number): Promise<void> {
    return sleepOn(this.signal, this.#task.core.clock, ms)
  }

  run<U>(taskFn: TaskFn<U>, options?: RunOptions): Task<U> {
    if (typeof taskFn !== 'function') {
      throw new TypeError(`ctx.run(taskFn): taskFn must be a function, got ${typeof taskFn}.`)
    }
    const task = this.#task
    return task.core.runTask(taskFn, options, 'ctx.run', task)
  }
}

/** The backend granted `job` a slot: its task runs the execute stage. */
export function startAttempt(job: AttemptJob): void {
  const task = recordOfJob(job)
  // The queue timeout, if any.
  clearStageTimer(task)
  task.core.resume(task, 'slot-granted')
}
