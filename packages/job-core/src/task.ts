import type { CancelledError } from './errors.js'
import type { CancelReason, TaskState } from './task-state.js'

/**
 * The work a task runs: receives a {@link TaskContext}, returns a value or a
 * promise of one.
 *
 * @example
 * ```ts
 * const load: TaskFn<string> = async (ctx) => (await fetch(url, { signal: ctx.signal })).text()
 * ```
 */
export type TaskFn<T> = (ctx: TaskContext) => T | PromiseLike<T>

/**
 * What a running body may use: its cancellation signal, its ids, a
 * cancellable sleep, and child tasks.
 *
 * @example
 * ```ts
 * run(rt, async (ctx) => {
 *   await ctx.sleep(100) // rejects if the task is cancelled
 *   const child = ctx.run(async () => 2) // cancelled ('parent') if this task ends first
 *   return 1 + (await child)
 * })
 * ```
 */
export interface TaskContext {
  /** Aborted when the task is cancelled or the attempt times out; `signal.reason` says why. */
  readonly signal: AbortSignal
  /** The id of the task this body runs for (`task.id`); the same on every attempt. */
  readonly taskId: number
  /** 1-based; greater than 1 on retries. */
  readonly attempt: number
  /** A cancellation point: resolves after `ms` on the runtime clock, rejects when the signal aborts. */
  sleep(ms: number): Promise<void>
  /** Runs a child task, cancelled with reason `parent` when this task ends or is cancelled. */
  run<U>(taskFn: TaskFn<U>, options?: RunOptions | undefined): Task<U>
}

/**
 * How many attempts a task gets, how long it waits between them, and which
 * errors are worth another attempt.
 *
 * @example
 * ```ts
 * const policy: RetryPolicy = { attempts: 3, delay: (n) => 100 * n, retryIf: (e) => !(e instanceof TypeError) }
 * ```
 */
export interface RetryPolicy {
  /** Total attempts, the first included; an integer ≥ 1. */
  attempts: number
  /**
   * ms to wait before the next attempt: a number, or a function of the
   * attempt that failed (1-based) and its error. Default: exponential with
   * full jitter, `floor(random() · min(30 000, 100 · 2^(attempt-1)))` ms —
   * up to 100, 200, 400 … ms, capped at 30 s (`createRuntime({ random })`
   * makes it deterministic). A negative, `NaN` or infinite delay fails the
   * task with a `RangeError`.
   */
  delay?: number | ((attempt: number, error: unknown) => number) | undefined
  /**
   * Whether the error of the attempt that failed is worth another attempt.
   * Not asked after the last attempt, nor for cancellation (never retried).
   * Default: every error except cancellation.
   */
  retryIf?: ((error: unknown, attempt: number) => boolean) | undefined
}

/**
 * Limits in ms, each optional; a plain number as `timeout` is the `attempt`
 * limit. Each one that fires ends in a `TimeoutError` whose `phase` names
 * it. A limit must be a finite number of ms above 0: `0` (which would fail
 * every task before it runs), negative, `NaN` and infinite limits are a
 * `RangeError` at `run()`.
 *
 * @example
 * ```ts
 * const timeout: TimeoutOptions = { attempt: 1_000, total: 5_000, queue: 500 }
 * ```
 */
export interface TimeoutOptions {
  /**
   * The longest one attempt may run, from its start. On expiry the
   * attempt's `ctx.signal` aborts with the `TimeoutError` and the attempt
   * fails with it; retryable like any error (`retryIf` may refuse it).
   */
  attempt?: number | undefined
  /**
   * The longest the whole task may take, from `run()` to its end: shaper
   * window, dependencies, queue, every attempt and retry wait. On expiry the
   * task ends `error` from whatever state it is in; never retried.
   */
  total?: number | undefined
  /**
   * The longest each stay in `queued` (waiting for a slot) may last. On
   * expiry the task leaves the queue and ends `error`; its body never runs.
   */
  queue?: number | undefined
}

/**
 * Per-call options of `run()`.
 *
 * @example
 * ```ts
 * run(rt, fetchUser, { label: 'user', priority: 1, retry: 3, timeout: { total: 5_000 } })
 * ```
 */
export interface RunOptions {
  /** A name for the task, shown in events, `inspect()` and devtools; default none. */
  label?: string | undefined
  /**
   * External cancellation: when it aborts, the task is cancelled (reason
   * `abort`, `cause` = `signal.reason`); an already-aborted signal cancels
   * before anything runs. Default none.
   */
  signal?: AbortSignal | undefined
  /**
   * Tasks of the same runtime this one waits for, in `parked:dependencies`,
   * until all of them succeed; if one fails or is cancelled, this task is
   * cancelled with reason `dependency`. Default none.
   */
  dependsOn?: readonly Task<unknown>[] | undefined
  /** Higher starts first among queued tasks; FIFO within a priority; default 0. */
  priority?: number | undefined
  /**
   * Time limits in ms: a number limits each attempt; an object sets any of
   * `attempt`, `total` and `queue` (see {@link TimeoutOptions}). Default
   * none: a task may take as long as its body does.
   */
  timeout?: number | TimeoutOptions | undefined
  /**
   * A number n means n attempts in all (the first included; `1` = no
   * retry); a {@link RetryPolicy} also sets the delay and which errors are
   * retried. Default: a single attempt.
   */
  retry?: number | RetryPolicy | undefined
}

/**
 * One call of `run()`: a thenable with an id and a state machine.
 *
 * @example
 * ```ts
 * const task = run(rt, async () => 42)
 * task.state // 'running'
 * await task // 42
 * task.state // 'success'
 * ```
 */
export interface Task<T> extends PromiseLike<T> {
  /** Unique within its runtime, increasing in creation order. */
  readonly id: number
  /** `RunOptions.label`, when one was given. */
  readonly label: string | undefined
  /** Where the task is in its state machine now; see `isTerminalState`. */
  readonly state: TaskState
  /** Set exactly when `state === 'cancelled'`. */
  readonly cancelReason: CancelReason | undefined
  /** The id of the task whose coordination or shaping cancelled this one, when there is one. */
  readonly cancelledBy: number | undefined
  /** The current or last attempt, 1-based; 0 before the first start. */
  readonly attempt: number
  /** What the caller receives; a coordinator may substitute it (e.g. a peer's promise). */
  readonly promise: Promise<T>
  /**
   * Cancels with reason `abort`; a no-op on a terminal task. Takes no
   * argument (one is refused with a `TypeError`): to say why, cancel
   * through `RunOptions.signal`, whose abort reason becomes the error's cause.
   */
  cancel(): void
  catch<R = never>(onRejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R>
  finally(onFinally?: (() => void) | null): Promise<T>
}

/**
 * How a task ended, as {@link settle} reports it. Never a rejection.
 *
 * @example
 * ```ts
 * const outcome: Outcome<number> = await settle(task)
 * if (outcome.status === 'success') console.log(outcome.value)
 * ```
 */
export type Outcome<T> =
  | { readonly status: 'success'; readonly value: T }
  | { readonly status: 'error'; readonly error: unknown }
  | { readonly status: 'cancelled'; readonly reason: CancelReason; readonly error: CancelledError }
