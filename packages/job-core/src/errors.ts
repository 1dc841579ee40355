import type { CancelReason, TimeoutPhase } from './types/task.js'

// A registry-wide symbol, so two copies of this package (a bundled one and an
// installed one) still recognise each other's errors.
const CANCELLED_BRAND = Symbol.for('@vega/job-core/CancelledError')
const TIMEOUT_BRAND = Symbol.for('@vega/job-core/TimeoutError')

/**
 * The error a cancelled task's promise rejects with, and the `reason` of its
 * aborted `ctx.signal`.
 *
 * @example
 * ```ts
 * try {
 *   await task
 * } catch (error) {
 *   if (isCancelledError(error)) console.log(error.reason) // 'abort', 'dedupe', …
 * }
 * ```
 */
export class CancelledError extends Error {
  override readonly name: 'CancelledError' = 'CancelledError'
  /** Why the task was cancelled. */
  readonly reason: CancelReason
  /** The id of the cancelled task. */
  readonly taskId: number
  /** The id of the task whose coordination or shaping cancelled this one, if any. */
  readonly cancelledBy: number | undefined

  constructor(
    reason: CancelReason,
    taskId: number,
    options: { cause?: unknown; cancelledBy?: number | undefined } = {},
  ) {
    // Capturing a stack is most of the cost of a cancellation. Only an abort
    // from the user's own code has a useful one (where cancel() was called).
    // Merges such as dedupe or superseded, and an abort made on behalf of
    // another task (restart's, which names it in cancelledBy), are
    // bookkeeping, and bursts of them are normal.
    const limit = Error.stackTraceLimit
    if (reason !== 'abort' || options.cancelledBy !== undefined) Error.stackTraceLimit = 0
    try {
      super(
        describeCancel(reason, taskId),
        'cause' in options ? { cause: options.cause } : undefined,
      )
    } finally {
      Error.stackTraceLimit = limit
    }
    this.reason = reason
    this.taskId = taskId
    this.cancelledBy = options.cancelledBy
    Object.defineProperty(this, CANCELLED_BRAND, { value: true })
  }
}

function describeCancel(reason: CancelReason, taskId: number): string {
  switch (reason) {
    case 'abort':
      return `Task #${taskId} was cancelled (abort). Catch it with isCancelledError(error) if cancelling is expected.`
    case 'shutdown':
      return `Task #${taskId} was cancelled because shutdown() was called on its runtime, which takes no new work from then on. Start work before shutdown(), or create a new runtime.`
    case 'dependency':
      return `Task #${taskId} was cancelled because a task it depends on did not succeed; see error.cause.`
    case 'parent':
      return `Task #${taskId} was cancelled because its parent task ended first; await child tasks inside the parent.`
    default:
      return `Task #${taskId} was cancelled (${reason}).`
  }
}

/**
 * Whether `error` is a {@link CancelledError}, from this or any other copy of
 * `@vega/job-core` (a brand check, not `instanceof`).
 *
 * @example
 * ```ts
 * const outcome = await task.then(() => 'ok', (e) => (isCancelledError(e) ? 'cancelled' : 'failed'))
 * ```
 */
export function isCancelledError(error: unknown): error is CancelledError {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { [CANCELLED_BRAND]?: unknown })[CANCELLED_BRAND] === true
  )
}

/**
 * The error a timed-out attempt or task fails with; `phase` says which timeout.
 *
 * @example
 * ```ts
 * const task = run(runtime, work, { timeout: { total: 5_000 } })
 * task.catch((e) => {
 *   if (isTimeoutError(e)) console.log(`timed out in phase ${e.phase}`)
 * })
 * ```
 */
export class TimeoutError extends Error {
  override readonly name: 'TimeoutError' = 'TimeoutError'
  readonly phase: TimeoutPhase
  /** The limit that was exceeded, in ms. */
  readonly ms: number
  readonly taskId: number

  constructor(phase: TimeoutPhase, ms: number, taskId: number) {
    super(`Task #${taskId} exceeded its ${phase} timeout of ${ms} ms.`)
    this.phase = phase
    this.ms = ms
    this.taskId = taskId
    Object.defineProperty(this, TIMEOUT_BRAND, { value: true })
  }
}

/**
 * Whether `error` is a {@link TimeoutError} from any copy of `@vega/job-core`.
 *
 * @example
 * ```ts
 * if (isTimeoutError(error) && error.phase === 'attempt') retryLater()
 * ```
 */
export function isTimeoutError(error: unknown): error is TimeoutError {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { [TIMEOUT_BRAND]?: unknown })[TIMEOUT_BRAND] === true
  )
}

/**
 * A task's taskFn was bound by a plugin (for example `withCoordinator`) that
 * is not installed in the runtime. The task ends in `error` with this.
 *
 * @example
 * ```ts
 * const rt = createRuntime() // forgot plugins: [installCoordination]
 * const outcome = await settle(run(rt, withCoordinator(fn, dedupeCoordinator, { key: 'a' })))
 * // outcome.status === 'error' && outcome.error instanceof PluginMissingError
 * ```
 */
export class PluginMissingError extends Error {
  override readonly name: 'PluginMissingError' = 'PluginMissingError'
  /** The name of the plugin that should have claimed the task. */
  readonly plugin: string

  constructor(plugin: string, taskId: number) {
    super(
      `Task #${taskId} was bound by ${plugin}, but the runtime does not have it: ` +
        `createRuntime({ plugins: [${plugin}] }).`,
    )
    this.plugin = plugin
  }
}

/**
 * A lifecycle method was called in a state that does not allow it (a plugin
 * installed twice, a task decided twice).
 *
 * @example
 * ```ts
 * try { request.proceed() } catch (e) { if (e instanceof IllegalStateError) console.error(e.message) }
 * ```
 */
export class IllegalStateError extends Error {
  override readonly name: 'IllegalStateError' = 'IllegalStateError'
}
