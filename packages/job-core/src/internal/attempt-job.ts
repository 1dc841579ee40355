import type { BackendJob, TimerHandle } from '../types/backend.js'
import type { RunOptions, Task, TaskFn } from '../types/task.js'
import type { AttemptCarrier, AttemptJob as AttemptJobShape, TaskRecord } from './model.js'
import { sleepOn } from './sleep.js'
import { clearStageTimer } from './task-extras.js'

/**
 * `started` once the backend granted a slot and the kernel took it;
 * `abandoned` once `abandonAfter` released its slot while the body still
 * runs; `exited` once the body left (returned, threw, or never entered
 * because the task ended first).
 */
export type AttemptPhase = 'started' | 'abandoned' | 'exited'

// The kernel's way into an attempt's private state (assigned in the class's
// static block below): a body holds the attempt as its `ctx` and must reach
// nothing but `TaskContext` through it.

/** The task of an attempt. */
export let recordOfJob: (job: AttemptJobShape) => TaskRecord
export let phaseOf: (job: AttemptJobShape) => AttemptPhase
export let setPhase: (job: AttemptJobShape, phase: AttemptPhase) => void
/** The body was called (an attempt can end before it enters: a cancel between grant and entry). */
export let hasEntered: (job: AttemptJobShape) => boolean
export let markEntered: (job: AttemptJobShape) => void
/** What the backend was handed for this attempt, and gets back in `release`. */
export let queuedOf: (job: AttemptJobShape) => BackendJob
/** The `timeout.attempt` timer while the body runs, then the abandon timer (`abandonAfter`). */
export let setTimer: (job: AttemptJobShape, timer: TimerHandle | undefined) => void
export let clearTimer: (job: AttemptJobShape) => void
/** Aborts the attempt's signal with `reason` (a `CancelledError` or `TimeoutError`). Once. */
export let abortAttempt: (job: AttemptJobShape, reason: unknown) => void
/** The carrier the attempt enters its body through (once), or `undefined` to enter at once. */
export let takeCarrier: (job: AttemptJobShape) => AttemptCarrier | undefined

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
export class AttemptJob implements AttemptJobShape {
  readonly taskId: number
  /** 1-based: the attempts of the task started before this one, plus one. */
  readonly attempt: number
  readonly #task: TaskRecord
  #phase: AttemptPhase = 'started'
  #entered = false
  #timer: TimerHandle | undefined = undefined
  readonly #queued: BackendJob
  /** The task's carrier, held from the grant until the execute stage enters the body through it. */
  #carrier: AttemptCarrier | undefined
  #signal: SignalState = UNREAD

  static {
    // Every attempt the kernel holds is one of these; the shape is the model's.
    const own = (job: AttemptJobShape) => job as AttemptJob
    recordOfJob = (job) => own(job).#task
    phaseOf = (job) => own(job).#phase
    setPhase = (job, phase) => {
      own(job).#phase = phase
    }
    hasEntered = (job) => own(job).#entered
    markEntered = (job) => {
      own(job).#entered = true
    }
    takeCarrier = (job) => {
      const carrier = own(job).#carrier
      own(job).#carrier = undefined
      return carrier
    }
    queuedOf = (job) => own(job).#queued
    setTimer = (job, timer) => {
      own(job).#timer = timer
    }
    clearTimer = (job) => {
      const attempt = own(job)
      const timer = attempt.#timer
      if (timer !== undefined) {
        attempt.#timer = undefined
        attempt.#task.core.clock.clearTimeout(timer)
      }
    }
    abortAttempt = (job, reason) => {
      const attempt = own(job)
      const signal = attempt.#signal
      if (signal.kind === 'unread') attempt.#signal = { kind: 'aborted-unread', reason }
      else if (signal.kind === 'read' && !signal.controller.signal.aborted) {
        signal.controller.abort(reason)
      }
    }
  }

  /** The backend granted `queued` a slot: the attempt takes over the task's carrier, if it waited with one. */
  constructor(task: TaskRecord, queued: BackendJob) {
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
export function startAttempt(job: AttemptJobShape): void {
  const task = recordOfJob(job)
  // The queue timeout, if any.
  clearStageTimer(task)
  task.core.resume(task, 'slot-granted')
}
