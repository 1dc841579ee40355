import { assertKnownKeys } from './assert-known-keys.js'
import { toCore } from './internal/runtime-handle.js'
import { ShutdownState } from './internal/shutdown-state.js'
import { validateMs } from './internal/validate.js'
import type { ShutdownOptions, ShutdownReport } from './types/runtime.js'
import type { Runtime } from './types/task.js'

const SHUTDOWN_OPTIONS: readonly string[] = ['mode', 'deadline']

/**
 * Shuts the runtime down: admission closes at once (later `run()` calls
 * return tasks cancelled with `shutdown`), work drains or is cancelled, a
 * drain escalates to cancel at the `deadline`, then plugins are disposed in
 * reverse install order. Calling it again returns the same promise; a
 * `cancel` call during a drain takes it over.
 *
 * @example
 * ```ts
 * process.on('SIGTERM', async () => {
 *   const report = await shutdown(runtime, { mode: 'drain', deadline: 10_000 })
 *   console.log(report)
 * })
 * ```
 */
export function shutdown(runtime: Runtime, options: ShutdownOptions = {}): Promise<ShutdownReport> {
  const core = toCore(runtime, 'shutdown(runtime)')
  assertKnownKeys('shutdown(runtime, options)', options, SHUTDOWN_OPTIONS)
  const mode = options.mode ?? 'drain'
  if (mode !== 'drain' && mode !== 'cancel') {
    throw new TypeError(
      `shutdown(runtime, { mode }): mode must be 'drain' or 'cancel', got ${typeof mode === 'string' ? `'${mode}'` : String(mode)}.`,
    )
  }
  const deadline =
    options.deadline === undefined
      ? undefined
      : validateMs(options.deadline, 'shutdown(runtime, { deadline })')
  if (core.shutdown !== undefined) {
    core.shutdown.join(mode, deadline)
    return core.shutdown.promise
  }
  const state = new ShutdownState(core, mode)
  core.shutdown = state
  state.start(deadline)
  return state.promise
}
