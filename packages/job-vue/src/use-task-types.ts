import type { CancelReason, RunOptions, Task, TaskContext, TaskFn, TaskState } from '@vega/job-core'
import type { ComputedRef } from 'vue'

// The public types of useTask, in a file of their own: the composable's
// internals (internal/task-owner.ts) use them, and use-task.ts uses the internals.

/**
 * The body of a `useTask`: the core `TaskContext` first (its `signal`
 * aborts when the task is cancelled), then the arguments of `run(...args)`.
 *
 * @example
 * ```ts fragment
 * const search: TaskBody<[string], Hit[]> = async (ctx, q) =>
 *   (await fetch(`/api?q=${q}`, { signal: ctx.signal })).json()
 * ```
 */
export type TaskBody<A extends unknown[], T> = (ctx: TaskContext, ...args: A) => T | PromiseLike<T>

/**
 * Options of `useTask`: the core `run()` options plus `bind` and `onUnmount`.
 *
 * @example
 * ```ts fragment
 * const options: UseTaskOptions<[string], Hit[]> = {
 *   label: 'search',
 *   bind: (taskFn) => withCoordinator(taskFn, restartCoordinator, { key: 'search' }),
 *   onUnmount: 'cancel',
 * }
 * ```
 */
export interface UseTaskOptions<A extends unknown[], T> extends RunOptions {
  /**
   * Applied to each call's taskFn before `run()`, with the call's arguments:
   * where `withCoordinator`, `withShaper` or any tag goes. Must return a function.
   */
  bind?: ((taskFn: TaskFn<T>, ...args: A) => TaskFn<T>) | undefined
  /**
   * What stopping the effect scope (a real unmount, `scope.stop()`) does to
   * the live tasks it started: `'cancel'` (default) or `'keep'` (they run on).
   */
  onUnmount?: 'cancel' | 'keep' | undefined
}

/**
 * What `useTask` returns: stable functions and read-only refs. Destructure
 * it in `setup()`; the refs unwrap in templates.
 *
 * @example
 * ```ts fragment
 * const { run, isRunning, value, error } = useTask(searchWords)
 * ```
 */
export interface UseTaskReturn<A extends unknown[], T> {
  /**
   * Runs the body with these arguments on the provided runtime and returns
   * nothing, so `@click="run(x)"` is safe: a handler that returns a promise
   * has its rejections reported by Vue, and a restarted search rejects.
   * Reads the options (a ref or getter is read now); the body calls `fn`
   * when it starts. The task is `last.value`.
   */
  run(...args: A): void
  /**
   * Runs like `run` and returns the core task: `await runAsync(x)` gives its
   * value or throws (a `CancelledError` when it was cancelled), and
   * `runAsync(x).cancel()` cancels it.
   */
  runAsync(...args: A): Task<T>
  /** Cancels every live task this composable started (reason `'abort'`). */
  cancelAll(): void
  /**
   * Back to the start: `last`, `value`, `error`, `cancelReason` and
   * `cancelledBy` are cleared and `state` is `'idle'`. Live tasks go on
   * (`cancelAll` stops them), but nothing they deliver shows any more.
   */
  reset(): void
  /** The latest task this composable started (since the last `reset`). */
  readonly last: ComputedRef<Task<T> | undefined>
  /** `last`'s state; `'idle'` before the first `run`. */
  readonly state: ComputedRef<TaskState>
  /** What the latest-started call that delivered a value got; kept while a newer one runs. */
  readonly value: ComputedRef<T | undefined>
  /** What `await last` rejected with, unless it was a cancellation; else `undefined`. */
  readonly error: ComputedRef<unknown>
  /** `last`'s cancel reason, when it was cancelled. */
  readonly cancelReason: ComputedRef<CancelReason | undefined>
  /** The task whose coordination or shaping cancelled `last`, when there is one. */
  readonly cancelledBy: ComputedRef<number | undefined>
  /** Whether a live task of this composable is `running`. */
  readonly isRunning: ComputedRef<boolean>
  /** Whether a live task of this composable is queued or parked. */
  readonly isWaiting: ComputedRef<boolean>
  /** How many tasks this composable has started. */
  readonly runCount: ComputedRef<number>
}
