// The vocabulary of a call: a task, its states, its body's context and the
// options of run(). Imports no other module.

/**
 * Every state a task can be in. Exactly one of `success`, `error`, `cancelled`
 * is reached, once, and never left.
 *
 * @example
 * ```ts
 * const task = run(runtime, async () => 1)
 * if (task.state === 'queued') console.log('waiting for a slot')
 * ```
 */
export type TaskState =
  | 'idle'
  | 'parked:shaper'
  | 'parked:coordinator'
  | 'parked:dependencies'
  | 'queued'
  | 'running'
  | 'parked:retry'
  | 'success'
  | 'error'
  | 'cancelled'

/**
 * The three states a task ends in.
 *
 * @example
 * ```ts
 * const done: TerminalState = 'success'
 * ```
 */
export type TerminalState = 'success' | 'error' | 'cancelled'

/**
 * Why a task was cancelled. Plugins may add their own reasons, hence the open
 * `string & {}` member.
 *
 * @example
 * ```ts
 * if (task.cancelReason === 'dedupe') console.log('merged into a peer')
 * ```
 */
export type CancelReason =
  | 'abort'
  | 'dedupe'
  | 'exhaust-dropped'
  | 'orphaned-intent'
  | 'superseded'
  | 'dependency'
  | 'parent'
  | 'shutdown'
  | 'overflow'
  | (string & {})

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
 * A task runtime: the registry of live tasks, the backend with its slots, the
 * clock and the event bus. A handle that exposes its `name` and nothing else
 * (frozen; its state is private): use the free functions (`run`,
 * `subscribe`, `cancelAll`, `shutdown`, `inspect`) on it. A runtime works
 * only with the copy of the package that created it.
 *
 * @example
 * ```ts
 * const runtime: Runtime = createRuntime({ name: 'api', concurrency: 8 })
 * ```
 */
export interface Runtime {
  readonly name: string
}

/**
 * What counts as a key: strings, numbers, booleans, `null`, and arrays and
 * plain objects of those.
 *
 * @example
 * ```ts
 * const key: Key = ['doc', 42, { draft: true }]
 * ```
 */
export type Key =
  | string
  | number
  | boolean
  | null
  | readonly Key[]
  | { readonly [field: string]: Key }

/**
 * `drain` lets parked and queued tasks run to the end; `cancel` cancels them
 * (reason `shutdown`) and aborts running bodies.
 *
 * @example
 * ```ts
 * const mode: ShutdownMode = 'drain'
 * ```
 */
export type ShutdownMode = 'drain' | 'cancel'

/**
 * Which timeout fired: one attempt, the whole task, or the wait in the queue.
 *
 * @example
 * ```ts
 * const phase: TimeoutPhase = 'attempt'
 * ```
 */
export type TimeoutPhase = 'attempt' | 'total' | 'queue'
