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
  readonly taskId: number
  /** 1-based; greater than 1 on retries. */
  readonly attempt: number
  /** A cancellation point: resolves after `ms` on the runtime clock, rejects when the signal aborts. */
  sleep(ms: number): Promise<void>
  /** Runs a child task, cancelled with reason `parent` when this task ends or is cancelled. */
  run<U>(taskFn: TaskFn<U>, options?: RunOptions): Task<U>
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
  /** ms before the next attempt; default exponential 100·2^(n-1) ms, capped at 30 s, full jitter. */
  delay?: number | ((attempt: number, error: unknown) => number)
  /** Default: every error except cancellation. */
  retryIf?: (error: unknown, attempt: number) => boolean
}

/**
 * Limits in ms. A plain number is the per-attempt limit.
 *
 * @example
 * ```ts
 * const timeout: TimeoutOptions = { attempt: 1_000, total: 5_000, queue: 500 }
 * ```
 */
export interface TimeoutOptions {
  attempt?: number
  total?: number
  queue?: number
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
  /** Shown in events and devtools. */
  label?: string
  /** External cancellation; an already-aborted signal cancels at once. */
  signal?: AbortSignal
  /** The task waits in `parked:dependencies` until all of these succeed. */
  dependsOn?: readonly Task<unknown>[]
  /** Higher starts first among queued tasks; FIFO within a priority; default 0. */
  priority?: number
  timeout?: number | TimeoutOptions
  /** A number n means n attempts in all. */
  retry?: number | RetryPolicy
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
  readonly label: string | undefined
  readonly state: TaskState
  /** Set exactly when `state === 'cancelled'`. */
  readonly cancelReason: CancelReason | undefined
  /** The id of the task whose coordination or shaping cancelled this one, when there is one. */
  readonly cancelledBy: number | undefined
  /** The current or last attempt, 1-based; 0 before the first start. */
  readonly attempt: number
  /** What the caller receives; a coordinator may substitute it (e.g. a peer's promise). */
  readonly promise: Promise<T>
  /** Cancels with reason `abort`; a no-op on a terminal task. */
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
