import { assertKnownKeys } from '@vega/job-core'
import { useEffect, useInsertionEffect, useState, useSyncExternalStore } from 'react'
import { useRuntimeStore } from './internal/context.js'
import { describe } from './internal/describe.js'
import { TaskHook, USE_TASK_OPTION_KEYS } from './internal/task-hook.js'
import type { TaskBody, UseTaskHandle, UseTaskOptions } from './use-task-types.js'

export type { TaskBody, UseTaskHandle, UseTaskOptions }

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
