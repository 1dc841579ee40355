// A runtime's options, and those of its shutdown.

import type { Backend, Clock } from './backend.js'
import type { Plugin } from './plugin.js'
import type { RetryPolicy, ShutdownMode, Task, TimeoutOptions } from './task.js'

/**
 * Options of {@link createRuntime}.
 *
 * @example
 * ```ts
 * const options: RuntimeOptions = { name: 'ui', concurrency: 4, plugins: [] }
 * ```
 */
export interface RuntimeOptions {
  /** Shown in devtools; default `runtime-<n>`. */
  name?: string | undefined
  /**
   * The most bodies running at once: a positive integer, or `Infinity` (the
   * default). A cancelled body that ignores its signal keeps its slot until
   * it exits. Not together with `backend`, which then owns the limit.
   */
  concurrency?: number | undefined
  /** Replaces the default priority backend (which then owns the concurrency limit). */
  backend?: Backend | undefined
  /** Installed in order; disposed in reverse order at shutdown. */
  plugins?: readonly Plugin[] | undefined
  /** Every kernel timer goes through it; default the system clock. Pass `createTestClock()` for fake time. */
  clock?: Clock | undefined
  /** The source of retry jitter, returning numbers in [0, 1); default `Math.random`. Inject for deterministic delays. */
  random?: (() => number) | undefined
  /**
   * Defaults for every `run()` / `ctx.run()` of this runtime (`timeout`,
   * `retry`, `priority`), merged under the call's own options: the call
   * always wins; `timeout` merges field by field.
   *
   * @example
   * ```ts
   * createRuntime({ defaults: { timeout: { attempt: 5_000, total: 30_000 }, retry: 3 } })
   * ```
   */
  defaults?: RunDefaults | undefined
  /**
   * At most `limit` body starts per `interval` ms (`window: 'sliding'`, the
   * default, or `'fixed'`, like p-queue's `intervalCap`). Waiting for the
   * window is `queued`; timers come from the runtime clock; a retry counts as
   * a start. The backend must support `setGate`.
   *
   * @example
   * ```ts
   * createRuntime({ concurrency: 4, rateLimit: { limit: 10, interval: 1_000 } })
   * ```
   */
  rateLimit?: RateLimitOptions | undefined
  /**
   * Backpressure: the most tasks waiting in `queued`; default `Infinity`.
   * A task that would exceed it is handled by `overflow`. Retries and tasks
   * that find a free slot at once are never refused.
   *
   * @example
   * ```ts
   * const task = run(createRuntime({ concurrency: 1, maxQueued: 0 }), work)
   * ```
   */
  maxQueued?: number | undefined
  /**
   * What a full queue does (only with `maxQueued`): `'reject-new'` (default)
   * cancels the new task, `'drop-oldest'` the longest-waiting task of the
   * lowest priority; reason `'overflow'` either way.
   *
   * @example
   * ```ts
   * createRuntime({ concurrency: 2, maxQueued: 100, overflow: 'drop-oldest' })
   * ```
   */
  overflow?: OverflowPolicy | undefined
  /**
   * ms after which a body that was told to stop (its task cancelled or timed
   * out, or its attempt timed out) and still has not exited is abandoned: its
   * slot is released and `task:abandoned` is emitted; its eventual exit emits
   * `task:exited { abandoned: true }`. Default `Infinity`: slots stay honest.
   *
   * @example
   * ```ts
   * createRuntime({ concurrency: 1, abandonAfter: 5_000 })
   * ```
   */
  abandonAfter?: number | undefined
  /**
   * Reports a task that ended in `error` while nobody observed it (by the
   * end plus one macrotask). Default: `console.error` once per task; a
   * function replaces that; `false` turns it off. Observed failures are never
   * reported.
   *
   * @example
   * ```ts
   * createRuntime({ onUnobservedError: (error, task) => log.error({ err: error, id: task.id }) })
   * ```
   */
  onUnobservedError?: UnobservedErrorHandler | false | undefined
}

/**
 * Runtime-wide defaults for `run()` and `ctx.run()`, merged under each call's
 * own options: a `run` option always wins; `timeout` merges field by field
 * (a number on `run` is its `attempt` limit and keeps the default `total`
 * and `queue`).
 *
 * @example
 * ```ts
 * const runtime = createRuntime({
 *   defaults: { timeout: { attempt: 5_000 }, retry: 3, priority: 0 },
 * })
 * run(runtime, fetchUser) // 3 attempts of at most 5 s each
 * run(runtime, fetchUser, { retry: 1 }) // one attempt: the call's own option wins
 * ```
 */
export interface RunDefaults {
  /** ms per attempt, or `{ attempt?, total?, queue? }`; merged field by field under the call's own. */
  timeout?: number | TimeoutOptions | undefined
  /** Attempts in all, or a policy; a call's own `retry` replaces it whole (`retry: 1` turns it off). */
  retry?: number | RetryPolicy | undefined
  /** The priority of calls that give none; default 0. */
  priority?: number | undefined
}

/**
 * At most `limit` body starts per `interval` ms, on the runtime clock. A task
 * waiting for the window is `queued`; a retry's attempt counts as a start.
 *
 * - `'sliding'` (default): never more than `limit` starts in any `interval`.
 * - `'fixed'`: a window opens at the first start after the last one closed
 *   and admits `limit` starts (p-queue's `interval` / `intervalCap`).
 *
 * @example
 * ```ts
 * const runtime = createRuntime({ rateLimit: { limit: 10, interval: 1_000 } })
 * const fixed = createRuntime({ rateLimit: { limit: 10, interval: 1_000, window: 'fixed' } })
 * ```
 */
export interface RateLimitOptions {
  /** Starts per window: a positive integer. */
  limit: number
  /** The window in ms: a finite number > 0. */
  interval: number
  /** Default `'sliding'`. */
  window?: 'fixed' | 'sliding' | undefined
}

/**
 * What `createRuntime({ maxQueued })` does with a task that would make the
 * queue longer than `maxQueued`. Either way the cancelled task's promise
 * rejects with a `CancelledError` whose reason is `'overflow'`.
 *
 * - `'reject-new'` (default): the new task is cancelled before it runs.
 * - `'drop-oldest'`: the longest-waiting task of the lowest queued priority is
 *   cancelled to admit the new one (with one priority, plainly the oldest); a
 *   new task whose priority is below every queued one is itself that task.
 *
 * @example
 * ```ts
 * const overflow: OverflowPolicy = 'drop-oldest'
 * const runtime = createRuntime({ concurrency: 2, maxQueued: 100, overflow })
 * ```
 */
export type OverflowPolicy = 'reject-new' | 'drop-oldest'

/**
 * Receives a task that ended in `error` while nobody observed it (no
 * `await`, `then`, `catch`, `finally`, `task.promise` or `settle(task)` by
 * the time it ended plus one macrotask).
 *
 * @example
 * ```ts
 * const report: UnobservedErrorHandler = (error, task) => logger.error({ err: error, task: task.label })
 * const runtime = createRuntime({ onUnobservedError: report })
 * ```
 */
export type UnobservedErrorHandler = (error: unknown, task: Task<unknown>) => void

/**
 * Options of {@link shutdown}.
 *
 * @example
 * ```ts
 * const options: ShutdownOptions = { mode: 'drain', deadline: 10_000 }
 * ```
 */
export interface ShutdownOptions {
  /** Default `drain`. */
  mode?: ShutdownMode | undefined
  /** ms after which a drain escalates to cancel and bodies still running are abandoned. Default: none. */
  deadline?: number | undefined
}

/**
 * What happened during a shutdown, counted over the tasks that settled while
 * it ran.
 *
 * @example
 * ```ts
 * const { completed, cancelled, abandoned } = await shutdown(runtime)
 * ```
 */
export interface ShutdownReport {
  /** The final mode: `cancel` if a drain escalated or was taken over. */
  readonly mode: ShutdownMode
  /** Tasks that reached `success` or `error`. */
  readonly completed: number
  /** Tasks that were cancelled, including calls refused because the runtime was closing. */
  readonly cancelled: number
  /** Bodies still running (ignoring their signal) when the deadline passed. */
  readonly abandoned: number
  /** Errors thrown by plugin shutdown listeners and disposers; each of them still ran. */
  readonly errors: readonly unknown[]
}
