import type { TimerHandle } from '../types/backend.js'
import { contextFor } from './attempt-context.js'
import { enterThroughWrappers } from './attempt-wrappers.js'
import { backendThrew } from './cancellation.js'
import type { TaskRecord } from './model.js'
import { isThenable } from './promises.js'
import type { QueuedAttempt } from './queued-attempt.js'
import { attemptFailed, attemptSucceeded } from './stages/execute.js'
import { bodyLeft } from './stages/settle.js'
import { armTimeout, clearStageTimer } from './task-extras.js'

/**
 * Where an attempt stands once the backend started it: `deciding`, holding
 * a slot, its body (entered or about to) deciding the task; `stale`,
 * holding a slot, its body told to stop (cancelled, timed out) and deciding
 * nothing, the honest slot; `abandoned`, its slot given back by
 * `abandonAfter` while the body is still inside; `released`, nothing left
 * to do (also a withdrawn job the backend started late: its slot went
 * straight back).
 */
export type AttemptPhase = 'deciding' | 'stale' | 'abandoned' | 'released'

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
 * the backend's `start()` to `release`. Only an attempt takes a slot and
 * gives it back (each once), starts a body, and tells the runtime's body
 * counters (`core.bodies`, see `body-ledger.ts`) that a body took, kept or
 * left a slot. What the backend holds (`ticket`, which makes the attempt
 * on its first `start()`: until then it is all that waits) and what the
 * body holds (its `ctx`) are thin facades over it.
 */
export class Attempt {
  readonly task: TaskRecord
  /** What the backend was handed, and gets back in `release`. */
  readonly ticket: QueuedAttempt
  /** Made at the grant, which decides (see {@link grant}). */
  phase: AttemptPhase = 'deciding'
  /** 1-based, set when the slot is taken: the attempts of the task started before this one, plus one. */
  number = 0
  /** The body was called (a task can end between the grant and the entry). */
  entered = false
  /** The `timeout.attempt` timer while the body decides, then the `abandonAfter` timer. */
  timer: TimerHandle | undefined = undefined
  signal: SignalState = UNREAD

  constructor(task: TaskRecord, ticket: QueuedAttempt) {
    this.task = task
    this.ticket = ticket
  }

  /**
   * The backend's first `job.start()`: the attempt takes its slot and its
   * task runs the execute stage; or, if the task no longer waits with this
   * ticket (it left the queue, or `enqueue` threw), the slot goes straight
   * back.
   */
  grant(): void {
    const task = this.task
    if (task.waiting !== this.ticket) {
      // Picked by the backend before it learnt of the withdrawal.
      this.phase = 'released'
      this.releaseSlot()
      return
    }
    this.number = task.attempt + 1
    task.waiting = undefined
    task.job = this
    task.core.bodies.slotTaken()
    // The queue timeout, if any.
    clearStageTimer(task)
    task.core.resume(task, 'slot-granted')
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
    this.releaseSlot()
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
    this.releaseSlot()
    core.bodies.slotReleased()
    core.checkIdle()
  }

  /** Gives the slot back to the backend; a backend that throws is reported, and the kernel's count stays right. */
  private releaseSlot(): void {
    try {
      this.task.core.backend.release(this.ticket)
    } catch (error) {
      backendThrew(this.task, 'release', error)
    }
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
