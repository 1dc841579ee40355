import { CancelledError } from '../errors.js'
import type { CancelReason } from '../types/task.js'

/**
 * A cancelled task's outcome whose `CancelledError` is built on first read.
 * Most merged calls (dedupe, superseded) are never awaited through their own
 * promise, and building an Error is the largest part of what they cost.
 */
export class CancelledOutcome {
  readonly status = 'cancelled' as const
  readonly reason: CancelReason
  readonly cancelledBy: number | undefined
  private readonly taskId: number
  /** The options of the cancel when it had a cause (a merge by a peer has none: no object kept). */
  private readonly caused: { readonly cause?: unknown } | undefined
  private built: CancelledError | undefined

  constructor(
    reason: CancelReason,
    taskId: number,
    cancelledBy: number | undefined,
    caused: { readonly cause?: unknown } | undefined,
  ) {
    this.reason = reason
    this.taskId = taskId
    this.cancelledBy = cancelledBy
    this.caused = caused
  }

  get error(): CancelledError {
    this.built ??= new CancelledError(
      this.reason,
      this.taskId,
      this.caused === undefined
        ? { cancelledBy: this.cancelledBy }
        : { cause: this.caused.cause, cancelledBy: this.cancelledBy },
    )
    return this.built
  }

  /** Reads as a plain `{ status, reason, error }` in logs and JSON. */
  toJSON(): { status: 'cancelled'; reason: CancelReason; error: CancelledError } {
    return { status: this.status, reason: this.reason, error: this.error }
  }
}
