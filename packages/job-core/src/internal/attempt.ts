import { IllegalStateError } from '../errors.js'
import type { TimerHandle } from '../types/backend.js'
import { contextFor } from './attempt-context.js'
import { enterThroughWrappers } from './attempt-wrappers.js'
import { backendError, backendThrew, releaseSlot } from './backend-seam.js'
import type { AttemptCarrier, TaskRecord } from './model.js'
import { isThenable } from './promises.js'
import { type QueuedAttempt, ticketFor } from './queued-attempt.js'
import { attemptFailed, attemptSucceeded } from './stages/execute.js'
import { bodyLeft } from './stages/settle.js'
import { armTimeout, clearStageTimer } from './task-extras.js'

/**
 * Where an attempt stands: `queued` in the backend; `withdrawn` before it
 * started (its task left the queue, or `enqueue` threw: a late `start()`
 * hands the slot straight back); `deciding`, holding a slot, its body
 * (entered or about to) deciding the task; `stale`, holding a slot, its
 * body told to stop (cancelled, timed out) and deciding nothing, the honest
 * slot; `abandoned`, its slot given back by `abandonAfter` while the body
 * is still inside; `released`, nothing left to do.
 */
export type AttemptPhase = 'queued' | 'withdrawn' | 'deciding' | 'stale' | 'abandoned' | 'released'

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
 * One attempt of a task and the slot it takes: the one owner of both, from
 * `enqueue` to `release`. Only an attempt starts a body, gives a slot back
 * (each once), and tells the runtime's body counters (`core.bodies`, see
 * `body-ledger.ts`) that a body took, kept or left a slot. What the backend holds (`ticket`) and what the body
 * holds (its `ctx`) are thin, frozen facades over it.
 */
export class Attempt {
  readonly task: TaskRecord
  /** What the backend is handed, and gets back in `withdraw` and `release`. */
  readonly ticket: QueuedAttempt
  phase: AttemptPhase = 'queued'
  /** 1-based, set when the slot is granted: the attempts of the task started before this one, plus one. */
  number = 0
  /** The body was called (a task can end between the grant and the entry). */
  entered = false
  /** The `timeout.attempt` timer while the body decides, then the `abandonAfter` timer. */
  timer: TimerHandle | undefined = undefined
  /** The task's carrier, held from the grant until the body enters through it. */
  carrier: AttemptCarrier | undefined = undefined
  signal: SignalState = UNREAD

  constructor(task: TaskRecord) {
    this.task = task
    this.ticket = ticketFor(this)
  }

  /**
   * Hands the attempt to the backend, which starts it when a slot is free
   * (inside this call when one is free now). A backend that throws ends the
   * task in `error` (the thrown value its `cause`); if it started the job
   * first, that body keeps its slot until it leaves, like any stopped body.
   */
  enqueue(): void {
    const task = this.task
    task.waiting = this
    try {
      task.core.backend.enqueue(this.ticket)
    } catch (error) {
      if (this.phase === 'queued') {
        // Refused: nothing waits in the backend; a start() that comes anyway gives the slot back.
        this.phase = 'withdrawn'
        task.waiting = undefined
      }
      backendThrew(task, 'enqueue', error)
    }
  }

  /**
   * The backend's `job.start()`: the attempt takes its slot and its task
   * runs the execute stage. Once: a second call is refused with an
   * `IllegalStateError` (the slot is released once, when the body leaves).
   */
  start(): void {
    const task = this.task
    switch (this.phase) {
      case 'queued': {
        this.phase = 'deciding'
        this.number = task.attempt + 1
        this.carrier = task.carrier
        task.carrier = undefined
        task.waiting = undefined
        task.job = this
        task.core.bodies.slotTaken()
        // The queue timeout, if any.
        clearStageTimer(task)
        task.core.resume(task, 'slot-granted')
        return
      }
      case 'withdrawn':
        // Picked by the backend before it learnt of the withdrawal: the slot goes straight back.
        this.phase = 'released'
        releaseSlot(task, this.ticket)
        return
      default:
        throw new IllegalStateError(
          `Backend called job.start() again for task #${task.id}${this.number === 0 ? '' : ` (attempt ${this.number})`}: a job starts once. ` +
            'The second call is refused; the slot the first one took is released once, with release(job), when the body leaves.',
        )
    }
  }

  /**
   * Takes the attempt back from the backend before it started (its task
   * ended, or its queue timeout passed). Returns what the backend threw, if
   * it did: the task's ending becomes an error.
   */
  withdraw(): { readonly error: unknown } | undefined {
    if (this.phase !== 'queued') return undefined
    this.phase = 'withdrawn'
    try {
      this.task.core.backend.withdraw(this.ticket)
      return undefined
    } catch (error) {
      return { error: backendError(this.task, 'withdraw', error) }
    }
  }

  /**
   * Calls the body through the runtime's attempt wrappers, unless the task
   * ended while the attempt waited to enter (the body then never runs, and
   * the slot goes back). Called once, by the execute stage or its carrier.
   */
  enter(): void {
    if (this.phase !== 'deciding') {
      this.bodyLeft(undefined, false)
      return
    }
    this.entered = true
    const task = this.task
    const limit = task.options.timeouts?.attempt
    // Armed from inside the body's context, so a retry it causes keeps that context.
    if (limit !== undefined) this.armAttemptTimeout(limit)
    const ctx = contextFor(this)
    const wrappers = task.core.attemptWrappers
    // Called as a plain function: `task.body(ctx)` would hand a `function`
    // body the task's record as `this`.
    const body = task.body
    let result: unknown
    try {
      result = wrappers === undefined ? body(ctx) : enterThroughWrappers(wrappers, task, ctx)
    } catch (error) {
      this.bodyLeft(error, true)
      return
    }
    if (isThenable(result)) {
      result.then(
        (value) => this.bodyLeft(value, false),
        (error) => this.bodyLeft(error, true),
      )
    } else {
      this.bodyLeft(result, false)
    }
  }

  /**
   * The body no longer decides its task (it was cancelled, failed, or timed
   * out): its signal aborts with `reason` and its timer goes. It keeps its
   * slot until it leaves, or until `abandonAfter` lets it go.
   */
  stop(reason: unknown): void {
    if (this.phase !== 'deciding') return
    const task = this.task
    this.phase = 'stale'
    task.job = undefined
    task.core.bodies.stopped(task)
    this.clearTimer()
    this.abortSignal(reason)
    const ms = task.core.control.abandonAfter
    if (ms !== Number.POSITIVE_INFINITY) {
      this.timer = task.core.clock.setTimeout(() => {
        this.timer = undefined
        this.abandon()
      }, ms)
    }
  }

  /** The body's `ctx.signal`, made on first read. */
  readSignal(): AbortSignal {
    const state = this.signal
    if (state.kind === 'read') return state.controller.signal
    const controller = new AbortController()
    if (state.kind === 'aborted-unread') controller.abort(state.reason)
    this.signal = { kind: 'read', controller }
    return controller.signal
  }

  private armAttemptTimeout(limit: number): void {
    const task = this.task
    this.timer = armTimeout(task, 'attempt', limit, (error) => {
      this.timer = undefined
      if (this.phase !== 'deciding') return
      this.stop(error)
      attemptFailed(task, error)
    })
  }

  /** `createRuntime({ abandonAfter })`: a stopped body that has not left by now gives its slot back. */
  private abandon(): void {
    if (this.phase !== 'stale') return
    this.phase = 'abandoned'
    const task = this.task
    const core = task.core
    core.bodies.staleLeft(task)
    core.shutdown?.bodyAbandoned()
    if (core.bus.active) core.bus.emit({ type: 'task:abandoned', taskId: task.id })
    bodyLeft(task)
    releaseSlot(task, this.ticket)
    core.bodies.slotReleased()
    core.checkIdle()
  }

  /**
   * The body left (returned or threw), or never entered. If it still
   * decides its task, its result settles the attempt; else `task:exited`
   * reports what the late body did. Then its slot goes back, once.
   */
  private bodyLeft(value: unknown, threw: boolean): void {
    const task = this.task
    const core = task.core
    const phase = this.phase
    this.clearTimer()
    if (phase === 'deciding') {
      this.phase = 'released'
      task.job = undefined
      // Counted out before its result is told (the ending, the retry): a
      // listener reads the body gone. Not idle before its slot is back.
      core.bodies.deciderLeft()
      if (threw) attemptFailed(task, value)
      else attemptSucceeded(task, value)
    } else if (phase === 'stale') {
      this.phase = 'released'
      core.bodies.staleLeft(task)
      if (this.entered && core.bus.active) {
        core.bus.emit(
          threw
            ? { type: 'task:exited', taskId: task.id, threw: value }
            : { type: 'task:exited', taskId: task.id },
        )
      }
    } else if (phase === 'abandoned') {
      // Its slot went back when it was abandoned: only its exit is left to report.
      this.phase = 'released'
      if (this.entered && core.bus.active) {
        core.bus.emit(
          threw
            ? { type: 'task:exited', taskId: task.id, threw: value, abandoned: true }
            : { type: 'task:exited', taskId: task.id, abandoned: true },
        )
      }
      return
    } else {
      return
    }
    bodyLeft(task)
    releaseSlot(task, this.ticket)
    core.bodies.slotReleased()
    core.checkIdle()
  }

  private clearTimer(): void {
    const timer = this.timer
    if (timer === undefined) return
    this.timer = undefined
    this.task.core.clock.clearTimeout(timer)
  }

  /** Aborts the body's signal with `reason` (a `CancelledError` or `TimeoutError`). Once. */
  private abortSignal(reason: unknown): void {
    const signal = this.signal
    if (signal.kind === 'unread') this.signal = { kind: 'aborted-unread', reason }
    else if (signal.kind === 'read' && !signal.controller.signal.aborted) {
      signal.controller.abort(reason)
    }
  }
}
