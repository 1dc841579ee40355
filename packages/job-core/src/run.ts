import { toCore } from './internal/runtime-core.js'
import { startTask } from './internal/task-record.js'
import type { Runtime } from './runtime.js'
import type { RunOptions, Task, TaskFn } from './task.js'

/**
 * Runs `taskFn` as a task on `runtime`. When a slot is free and nothing waits
 * ahead, the body starts synchronously, before `run` returns. Never throws for
 * runtime reasons (a shut-down runtime, a missing plugin): the task reports
 * them. Throws `TypeError`/`RangeError` only for bad arguments.
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
  return startTask(core, taskFn, validateRunOptions(options), undefined)
}

function validateRunOptions(options: RunOptions | undefined): RunOptions {
  if (options === undefined) return EMPTY
  if (options === null || typeof options !== 'object') {
    throw new TypeError('run(runtime, taskFn, options): options must be an object.')
  }
  const { label, signal, priority } = options
  if (label !== undefined && typeof label !== 'string') {
    throw new TypeError('run(…, { label }): label must be a string.')
  }
  if (
    signal !== undefined &&
    !(typeof signal === 'object' && signal !== null && 'aborted' in signal)
  ) {
    throw new TypeError('run(…, { signal }): signal must be an AbortSignal.')
  }
  if (priority !== undefined && (typeof priority !== 'number' || !Number.isFinite(priority))) {
    throw new TypeError(
      `run(…, { priority }): priority must be a finite number, got ${String(priority)}.`,
    )
  }
  // dependsOn is checked (and copied) by the task itself, for run() and ctx.run() alike.
  return options
}

const EMPTY: RunOptions = Object.freeze({})
