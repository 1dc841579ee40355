import { CancelledError } from '../errors.js'
import type { CancelReason } from '../task-state.js'

/**
 * A cancelled task's outcome whose `CancelledError` is built on first read.
 * Most merged calls (dedupe, superseded) are never awaited through their own
 * promise, and building an Error is the largest part of what they cost.
 */
export class CancelledOutcome {
  readonly status = 'cancelled' as const
  readonly reason: CancelReason
  private readonly taskId: number
  private readonly options: { readonly cancelledBy?: number | undefined; readonly cause?: unknown }
  private built: CancelledError | undefined

  constructor(
    reason: CancelReason,
    taskId: number,
    options: { readonly cancelledBy?: number | undefined; readonly cause?: unknown },
  ) {
    this.reason = reason
    this.taskId = taskId
    this.options = options
  }

  get cancelledBy(): number | undefined {
    return this.options.cancelledBy
  }

  get error(): CancelledError {
    this.built ??= new CancelledError(this.reason, this.taskId, this.options)
    return this.built
  }

  /** Reads as a plain `{ status, reason, error }` in logs and JSON. */
  toJSON(): { status: 'cancelled'; reason: CancelReason; error: CancelledError } {
    return { status: this.status, reason: this.reason, error: this.error }
  }
}
