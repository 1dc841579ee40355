import { toCore } from './internal/runtime-handle.js'
import type { RunOptions, Runtime, Task, TaskFn } from './types/task.js'

/**
 * Runs `taskFn` as a task on `runtime`. When a slot is free and nothing waits
 * ahead, the body starts synchronously, before `run` returns. Never throws for
 * runtime reasons (a shut-down runtime, a missing plugin): the task reports
 * them. Throws `TypeError`/`RangeError` only for bad arguments. The body runs
 * in the async context of this call, even when it starts later.
 *
 * @example
 * ```ts
 * const task = run(runtime, async (ctx) => {
 *   const res = await fetch('/api/user', { signal: ctx.signal })
 *   return res.json()
 * }, { label: 'user', timeout: 5_000, retry: 3 })
 * task.cancel() // if the user navigates away
 * ```
 */
export function run<T>(runtime: Runtime, taskFn: TaskFn<T>, options?: RunOptions): Task<T> {
  const core = toCore(runtime, 'run(runtime, taskFn)')
  if (typeof taskFn !== 'function') {
    throw new TypeError(`run(runtime, taskFn): taskFn must be a function, got ${typeof taskFn}.`)
  }
  return core.runTask(taskFn, options, 'run', undefined)
}
