import type { RetryPolicy, Task, TimeoutOptions } from './task.js'

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
