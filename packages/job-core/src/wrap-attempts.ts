import { toCore } from './internal/runtime-core.js'
import { describeValue } from './internal/validate.js'
import type { Runtime } from './runtime.js'
import type { Task } from './task.js'

/**
 * What an {@link AttemptWrapper} is told about the attempt it wraps.
 *
 * @example
 * ```ts
 * const info: AttemptInfo = { task, attempt: 1 }
 * console.log(`#${info.task.id} (${info.task.label}) attempt ${info.attempt}`)
 * ```
 */
export interface AttemptInfo {
  /** The task, as `run()` returned it. */
  readonly task: Task<unknown>
  /** 1-based; greater than 1 on retries. */
  readonly attempt: number
}

/**
 * Runs around every attempt's body: called synchronously when a body is
 * about to be entered, inside the body's async context (the context of its
 * `run()` call, also after waiting in the queue, behind dependencies, a
 * coordinator or a shaper, and for every retry). It must call `enter()`
 * exactly once, synchronously; `enter()` runs the body (and any wrapper
 * installed after this one) and returns what the body returned, or throws
 * what it threw.
 *
 * The body's outcome is what `enter()` produced, whatever the wrapper
 * returns. A wrapper that throws before calling `enter()` fails the attempt
 * with its error without running the body; one that throws after fails the
 * attempt with its error once the body has exited; one that returns without
 * calling `enter()` fails the attempt with a `TypeError`.
 *
 * @example
 * ```ts
 * const wrapper: AttemptWrapper = (info, enter) => storage.run({ taskId: info.task.id }, enter)
 * ```
 */
export type AttemptWrapper = (info: AttemptInfo, enter: () => unknown) => unknown

/**
 * Wraps every attempt body that starts from now on in `wrapper`: the seam for
 * tracing (an attempt span made active around the body) and for anything
 * else that must run a body inside a context of its own. Works on a runtime
 * that already runs tasks; wrappers compose (one installed earlier is outer);
 * the returned function removes this wrapper (calling it again does
 * nothing). A runtime without wrappers pays one check per attempt.
 * `inspect(runtime).sizes.attemptWrappers` counts them.
 *
 * @example
 * ```ts
 * import { AsyncLocalStorage } from 'node:async_hooks'
 * import { createRuntime, run, wrapAttempts } from '@vega/job-core'
 *
 * const runtime = createRuntime({ concurrency: 1 })
 * const current = new AsyncLocalStorage<string>()
 * const unwrap = wrapAttempts(runtime, (info, enter) =>
 *   current.run(`task #${info.task.id}, attempt ${info.attempt}`, enter),
 * )
 * console.log(await run(runtime, async () => current.getStore())) // 'task #1, attempt 1'
 * unwrap()
 * ```
 */
export function wrapAttempts(runtime: Runtime, wrapper: AttemptWrapper): () => void {
  const core = toCore(runtime, 'wrapAttempts(runtime, wrapper)')
  if (typeof wrapper !== 'function') {
    throw new TypeError(
      `wrapAttempts(runtime, wrapper): wrapper must be a function (info, enter) => enter(), got ${describeValue(wrapper)}.`,
    )
  }
  // Copy-on-write, as the bus's listeners: a body entering while a wrapper
  // is added or removed goes through the list it started with.
  core.attemptWrappers = [...(core.attemptWrappers ?? []), wrapper]
  let installed = true
  return () => {
    if (!installed) return
    installed = false
    const rest = core.attemptWrappers!.filter((w) => w !== wrapper)
    core.attemptWrappers = rest.length === 0 ? undefined : rest
  }
}
