import type { TimerHandle } from '../types/backend.js'
import type { ShutdownReport } from '../types/runtime.js'
import type { ShutdownMode, TerminalState } from '../types/task.js'
import { cancelTask } from './cancellation.js'
import type { RuntimeCore, ShutdownState as ShutdownStateShape } from './model.js'
import { nextMacrotask } from './promises.js'
import { liftPause } from './start-gate.js'

/**
 * One runtime's shutdown, from the first `shutdown()` call to its report.
 * Later calls share it; a `cancel` call takes over a `drain`.
 */
export class ShutdownState implements ShutdownStateShape {
  readonly promise: Promise<ShutdownReport>
  private mode: ShutdownMode
  private completed = 0
  private cancelled = 0
  private abandoned = 0
  private readonly errors: unknown[] = []
  private finished = false

  /** The shutdown is over: every task ended and every plugin was disposed. */
  get isFinished(): boolean {
    return this.finished
  }
  private deadlineTimer: { readonly due: number; readonly handle: TimerHandle } | undefined
  private readonly runtime: RuntimeCore
  private resolve!: (report: ShutdownReport) => void

  constructor(runtime: RuntimeCore, mode: ShutdownMode) {
    this.runtime = runtime
    this.mode = mode
    this.promise = new Promise((resolve) => {
      this.resolve = resolve
    })
  }

  start(deadline: number | undefined): void {
    const { runtime } = this
    runtime.bus.emit({ type: 'runtime:shutdown', phase: 'started' })
    this.notify()
    if (this.mode === 'cancel') this.cancelEverything()
    // A drain runs queued work to the end: a paused runtime would never finish.
    else liftPause(runtime)
    this.armDeadline(deadline)
    runtime.whenIdle(() => void this.finish())
  }

  /** A second call: `cancel` takes over a drain; an earlier deadline wins. */
  join(mode: ShutdownMode, deadline: number | undefined): void {
    if (this.finished) return
    this.armDeadline(deadline)
    if (mode === 'cancel' && this.mode === 'drain') {
      this.escalate()
    }
  }

  private escalate(): void {
    this.mode = 'cancel'
    this.runtime.bus.emit({ type: 'runtime:shutdown', phase: 'escalated' })
    this.notify()
    this.cancelEverything()
  }

  /** Plugin listeners hear of the mode before any task is cancelled; one that throws is reported, not fatal. */
  private notify(): void {
    for (const listener of [...this.runtime.shutdownListeners]) {
      try {
        listener(this.mode)
      } catch (error) {
        this.errors.push(error)
      }
    }
  }

  /** `abandonAfter` let go of a body while the shutdown ran: the report counts it. */
  bodyAbandoned(): void {
    if (!this.finished) this.abandoned++
  }

  taskSettled(status: TerminalState): void {
    if (status === 'cancelled') this.cancelled++
    else this.completed++
  }

  private armDeadline(deadline: number | undefined): void {
    if (deadline === undefined) return
    const clock = this.runtime.clock
    const due = clock.now() + deadline
    if (this.deadlineTimer !== undefined) {
      if (this.deadlineTimer.due <= due) return
      clock.clearTimeout(this.deadlineTimer.handle)
    }
    const handle = clock.setTimeout(() => this.deadlinePassed(), deadline)
    this.deadlineTimer = { due, handle }
  }

  private deadlinePassed(): void {
    this.deadlineTimer = undefined
    if (this.finished) return
    if (this.mode === 'drain') {
      this.escalate()
    }
    void this.abandonStragglers()
  }

  /** Aborted bodies get one macrotask to leave; those still running are left behind, and reported. */
  private async abandonStragglers(): Promise<void> {
    await nextMacrotask()
    if (this.finished) return
    this.abandoned += this.runtime.bodies.running
    await this.finish()
  }

  private cancelEverything(): void {
    for (const task of this.runtime.live.toArray()) cancelTask(task, 'shutdown')
  }

  private async finish(): Promise<void> {
    if (this.finished) return
    this.finished = true
    const { runtime } = this
    if (this.deadlineTimer !== undefined) {
      runtime.clock.clearTimeout(this.deadlineTimer.handle)
      this.deadlineTimer = undefined
    }
    const errors = this.errors
    for (const { dispose } of [...runtime.disposers].reverse()) {
      try {
        await dispose()
      } catch (error) {
        errors.push(error)
      }
    }
    runtime.bus.emit({ type: 'runtime:shutdown', phase: 'finished' })
    this.resolve({
      mode: this.mode,
      completed: this.completed,
      cancelled: this.cancelled,
      abandoned: this.abandoned,
      errors,
    })
  }
}
