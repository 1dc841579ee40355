import { assertKnownKeys, type RunOptions } from '@vega/job-core'
import type { UseTaskOptions } from '../use-task-types.js'
import { describe } from './describe.js'

const RUN_OPTION_KEYS = [
  'label',
  'signal',
  'dependsOn',
  'priority',
  'timeout',
  'retry',
] as const satisfies readonly (keyof RunOptions)[]
/** Every key of core's `RunOptions`: one that core adds and this list lacks fails the type check. */
type EveryRunOption<Keys extends readonly (keyof RunOptions)[]> =
  Exclude<keyof RunOptions, Keys[number]> extends never ? Keys : never
const CHECKED_RUN_OPTION_KEYS: EveryRunOption<typeof RUN_OPTION_KEYS> = RUN_OPTION_KEYS
const USE_TASK_OPTION_KEYS: readonly string[] = [...CHECKED_RUN_OPTION_KEYS, 'bind', 'onUnmount']

/** Checks what `useTask` takes (at the call, and again at each `run` for a ref or getter); returns a copy. */
export function validateOptions<A extends unknown[], T>(options: unknown): UseTaskOptions<A, T> {
  if (options === undefined) return {}
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(
      `useTask(fn, options): options must be an object (or a ref or getter of one), got ${describe(options)}.`,
    )
  }
  assertKnownKeys('useTask(fn, options)', options, USE_TASK_OPTION_KEYS)
  const { bind, onUnmount } = options as UseTaskOptions<A, T>
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
  return { ...(options as UseTaskOptions<A, T>) }
}
