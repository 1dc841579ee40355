import type { RunOptions, Task, TaskContext, TaskFn, TaskState } from '@vega/job-core'

// The public types of useTask, in a file of their own: the hook's internals
// (internal/task-hook.ts) use them, and use-task.ts uses the internals.

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
   * What a real unmount does to the hook's live tasks: `'cancel'` (default,
   * reason `'abort'`) or `'keep'` (they run on; their results stay in the tasks).
   */
  onUnmount?: 'cancel' | 'keep' | undefined
}

/**
 * What `useTask` returns. The object is the same on every render; its
 * data members read the hook's current state.
 *
 * @example
 * ```ts fragment
 * const save: UseTaskHandle<[Draft], SavedDraft> = useTask(saveDraft)
 * ```
 */
export interface UseTaskHandle<A extends unknown[], T> {
  /**
   * Runs the body with these arguments on the provider's runtime and returns
   * the core task (`await handle.run(x)` works). The body and options are
   * those of the latest committed render. Throws when called during render.
   */
  run(...args: A): Task<T>
  /** Cancels every live task this hook started (reason `'abort'`). */
  cancelAll(): void
  /** The latest task this hook started. */
  readonly last: Task<T> | undefined
  /** `last`'s state; `'idle'` before the first `run`. */
  readonly state: TaskState
  /** What the latest-started call that delivered a value got; kept while a newer one runs. */
  readonly value: T | undefined
  /** What `await last` rejected with, unless it was a cancellation; else `undefined`. */
  readonly error: unknown
  /** Whether a live task of this hook is `running`. */
  readonly isRunning: boolean
  /** Whether a live task of this hook is queued or parked. */
  readonly isWaiting: boolean
  /** How many tasks this hook has started. */
  readonly runCount: number
}
