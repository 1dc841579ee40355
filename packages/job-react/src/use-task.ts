import type { RunOptions, Task, TaskContext, TaskFn, TaskState } from '@vega/job-core'
import { assertKnownKeys } from '@vega/job-core'
import { useEffect, useInsertionEffect, useState, useSyncExternalStore } from 'react'
import { useRuntimeStore } from './internal/context.js'
import { describe } from './internal/describe.js'
import { TaskHook, USE_TASK_OPTION_KEYS } from './internal/task-hook.js'

/**
 * The body of a {@link useTask}: the core `TaskContext` first (its `signal`
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
 * Options of {@link useTask}: the core `run()` options plus `bind` and `onUnmount`.
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
 * What {@link useTask} returns. The object is the same on every render; its
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

/**
 * Binds an async body to the component: a stable handle whose `run(...args)`
 * starts a task on the provider's runtime, and whose members re-render the
 * component only when they change. Results live in the tasks, not in the
 * component: out-of-order results never win, StrictMode's replay cancels
 * nothing, and a real unmount cancels the hook's live tasks (unless
 * `onUnmount: 'keep'`). Throws at render for a non-function `fn`, an unknown
 * option, a non-function `bind` or an `onUnmount` other than `'cancel'` / `'keep'`.
 *
 * @example
 * ```ts fragment
 * function SearchBox() {
 *   const search = useTask(
 *     async (ctx, q: string) => api.search(q, { signal: ctx.signal }),
 *     { label: 'search', bind: (fn) => withCoordinator(fn, restartCoordinator, { key: 'search' }) },
 *   )
 *   return <input onChange={(e) => search.run(e.target.value)} />
 * }
 * ```
 */
export function useTask<A extends unknown[], T>(
  fn: TaskBody<A, T>,
  options: UseTaskOptions<A, T> = {},
): UseTaskHandle<A, T> {
  const store = useRuntimeStore('useTask(fn, options)')
  validate(fn, options)
  const [hook] = useState(() => new TaskHook<A, T>({ fn, options, store }))
  hook.rendering()
  useInsertionEffect(() => {
    hook.committed({ fn, options, store })
  })
  useEffect(() => {
    hook.mounted()
    return () => hook.unmounted()
  }, [hook])
  useSyncExternalStore(hook.subscribe, hook.getSnapshot, hook.getSnapshot)
  return hook.handle
}

function validate(fn: unknown, options: unknown): void {
  if (typeof fn !== 'function') {
    throw new TypeError(`useTask(fn, options): fn must be a function, got ${describe(fn)}.`)
  }
  assertKnownKeys('useTask(fn, options)', options as object, USE_TASK_OPTION_KEYS)
  const { bind, onUnmount } = options as UseTaskOptions<unknown[], unknown>
  if (bind !== undefined && typeof bind !== 'function') {
    throw new TypeError(
      `useTask(fn, { bind }): bind must be a function (taskFn, ...args) => taskFn, got ${describe(bind)}.`,
    )
  }
  if (onUnmount !== undefined && onUnmount !== 'cancel' && onUnmount !== 'keep') {
    throw new TypeError(
      `useTask(fn, { onUnmount }): onUnmount must be 'cancel' or 'keep', got ${describe(onUnmount)}.`,
    )
  }
}
