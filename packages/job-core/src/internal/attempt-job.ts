import type { BackendJob } from '../backend.js'
import type { TimerHandle } from '../clock.js'
import type { RunOptions, Task, TaskContext, TaskFn } from '../task.js'
import { JOB_BINDINGS } from './bindings.js'
import type { ContextCarrier, ContextSnapshot } from './context-carrier.js'
import { sleepOn } from './sleep.js'
import { clearStageTimer } from './task-extras.js'
import type { TaskRecord } from './task-record.js'

/**
 * `waiting` for a slot; `started` once the backend granted one and the
 * kernel took it; `abandoned` once `abandonAfter` released its slot while
 * the body still runs; `exited` once the body left (returned, threw, or
 * never entered because the task ended first).
 */
export type AttemptPhase = 'waiting' | 'started' | 'abandoned' | 'exited'

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
/**
 * What the backend was handed for this attempt and gets back in `release`:
 * the task's record for its first attempt (see `TaskRecord.start`), a
 * {@link RetryTicket} for a retry.
 */
export let ticketOf: (job: AttemptJob) => BackendJob
/** The `timeout.attempt` timer while the body runs, then the abandon timer (`abandonAfter`). */
export let setTimer: (job: AttemptJob, timer: TimerHandle | undefined) => void
export let clearTimer: (job: AttemptJob) => void
/** Aborts the attempt's signal with `reason` (a `CancelledError` or `TimeoutError`). Once. */
export let abortAttempt: (job: AttemptJob, reason: unknown) => void
/** The carrier the attempt enters its body through (once), or `undefined` to enter at once. */
export let takeCarrier: (job: AttemptJob) => AttemptCarrier | undefined

/**
 * What the context carrier of a task that ended while it waited carries: a
 * wrapper, because the record itself is a thenable and a promise resolved
 * with it would adopt it.
 */
export interface EndedWaiting {
  readonly ended: TaskRecord
}

/**
 * The async context of the task's `run()` call (or of a failed attempt, for
 * a retry), kept for a body that starts later: a snapshot, or a promise door.
 */
export type AttemptCarrier = ContextSnapshot | ContextCarrier<AttemptJob | EndedWaiting>

// `#phase` and `#entered` share one small integer: phase index in bits 0–1, entered in bit 2.
const PHASES: readonly AttemptPhase[] = ['waiting', 'started', 'abandoned', 'exited']
const PHASE_BITS = 0b11
const ENTERED_BIT = 0b100

function phaseIndexOf(phase: AttemptPhase): number {
  switch (phase) {
    case 'waiting':
      return 0
    case 'started':
      return 1
    case 'abandoned':
      return 2
    default:
      return 3
  }
}

/**
 * One attempt of a task, and the `ctx` its body receives: its signal, its
 * timer and its slot. A first attempt waits in the backend as the task's
 * record and gets its attempt when it starts; a retry's attempt waits
 * behind a {@link RetryTicket}. An attempt that no longer decides its task
 * (cancelled, timed out) keeps its slot until its body leaves: the honest
 * slot. One object serves the body and the kernel (one allocation per
 * attempt, not two); the kernel's part is private.
 */
export class AttemptJob implements TaskContext {
  readonly taskId: number
  /** 1-based: the attempts of the task started before this one, plus one. */
  readonly attempt: number
  readonly #task: TaskRecord
  /** Phase and entered (see `PHASES`); 0 is `waiting`, not entered. */
  #flags = 0
  #timer: TimerHandle | undefined = undefined
  readonly #ticket: BackendJob
  /**
   * Held here from the moment the attempt exists until the execute stage
   * takes it: the record's one slot then holds the attempt (see
   * `TaskRecord.pending`).
   */
  #carrier: AttemptCarrier | undefined
  /**
   * The signal's state, made on first use (most bodies never read it): its
   * controller once read, the abort reason if aborted before anyone read it.
   */
  #signal: AbortController | { readonly reason: unknown } | undefined = undefined

  static {
    recordOfJob = (job) => job.#task
    phaseOf = (job) => PHASES[job.#flags & PHASE_BITS]!
    setPhase = (job, phase) => {
      job.#flags = (job.#flags & ~PHASE_BITS) | phaseIndexOf(phase)
    }
    hasEntered = (job) => (job.#flags & ENTERED_BIT) !== 0
    markEntered = (job) => {
      job.#flags |= ENTERED_BIT
    }
    takeCarrier = (job) => {
      const carrier = job.#carrier
      if (carrier !== undefined) job.#carrier = undefined
      return carrier
    }
    ticketOf = (job) => job.#ticket
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
      if (signal === undefined) job.#signal = { reason }
      else if (signal instanceof AbortController && !signal.signal.aborted) signal.abort(reason)
    }
  }

  /**
   * A first attempt is made when the backend grants it a slot; a retry's when
   * it queues. Either takes over the task's carrier, if it waited with one.
   */
  constructor(task: TaskRecord, ticket?: RetryTicket) {
    this.#task = task
    this.taskId = task.id
    this.attempt = task.attempt + 1
    this.#ticket = ticket ?? task
    this.#carrier = task.carrier
  }

  get signal(): AbortSignal {
    const state = this.#signal
    if (state instanceof AbortController) return state.signal
    const controller = new AbortController()
    if (state !== undefined) controller.abort(state.reason)
    this.#signal = controller
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
  setPhase(job, 'started')
  const task = recordOfJob(job)
  // The queue timeout, if any.
  clearStageTimer(task)
  task.core.advance(task)
}

/**
 * What a retry's attempt waits in the backend as: the attempt itself is a
 * body's `ctx` and must not offer the backend's `start()` to it.
 */
export class RetryTicket implements BackendJob {
  readonly job: AttemptJob

  constructor(task: TaskRecord) {
    this.job = new AttemptJob(task, this)
  }

  get task(): Task<unknown> {
    return recordOfJob(this.job).handle
  }

  get priority(): number {
    return recordOfJob(this.job).options.priority
  }

  get taskFn(): TaskFn<unknown> {
    return recordOfJob(this.job).taskFn
  }

  /** The backend grants a slot: the attempt runs, or gives the slot straight back. */
  start(): void {
    const job = this.job
    const task = recordOfJob(job)
    if (!task.holds(job) || phaseOf(job) !== 'waiting') {
      // Withdrawn after the backend picked it.
      task.core.backend.release(this)
      return
    }
    startAttempt(job)
  }
}

// `readTaskTag(job, tag)` on a retry's ticket (see the record's).
Object.defineProperty(RetryTicket.prototype, JOB_BINDINGS, {
  get(this: RetryTicket) {
    return recordOfJob(this.job).bindings
  },
})
