import { toCore } from './internal/runtime-handle.js'
import { describeValue } from './internal/validate.js'
import type { AttemptWrapper } from './types/plugin.js'
import type { Runtime } from './types/task.js'

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
