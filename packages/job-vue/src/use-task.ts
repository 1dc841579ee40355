import { getCurrentScope, type MaybeRefOrGetter, onScopeDispose, toValue } from 'vue'
import { injectRuntime } from './internal/context.js'
import { describe } from './internal/describe.js'
import { validateOptions } from './internal/options.js'
import { TaskOwner } from './internal/task-owner.js'
import type { TaskBody, UseTaskOptions, UseTaskReturn } from './use-task-types.js'

export type { TaskBody, UseTaskOptions, UseTaskReturn }

/**
 * Binds an async body to the component (or any effect scope): stable
 * `run` / `runAsync` / `cancelAll` / `reset`, and read-only refs of the state
 * of what it started. Results live in the tasks: out-of-order results never
 * win, and a component under `<KeepAlive>` shows where its tasks are when it
 * is activated again. When the scope stops (a real unmount,
 * `effectScope().stop()`), its live tasks are cancelled, unless
 * `onUnmount: 'keep'`. `options` may be a ref or a getter: it is read at
 * each `run`. Throws at once for a non-function `fn`, an unknown option, a
 * bad `bind` or `onUnmount`, or when no runtime was provided.
 *
 * @example
 * ```ts fragment
 * const { run, isRunning, value, error } = useTask(
 *   async (ctx, q: string) => api.search(q, { signal: ctx.signal }),
 *   { label: 'search', bind: (fn) => withCoordinator(fn, restartCoordinator, { key: 'search' }) },
 * )
 * ```
 */
export function useTask<A extends unknown[], T>(
  fn: TaskBody<A, T>,
  options: MaybeRefOrGetter<UseTaskOptions<A, T>> = {},
): UseTaskReturn<A, T> {
  if (typeof fn !== 'function') {
    throw new TypeError(`useTask(fn, options): fn must be a function, got ${describe(fn)}.`)
  }
  validateOptions(toValue(options))
  const owner = new TaskOwner(injectRuntime('useTask(fn, options)'), fn, options)
  if (getCurrentScope() !== undefined) onScopeDispose(() => owner.dispose())
  return owner.handle
}
