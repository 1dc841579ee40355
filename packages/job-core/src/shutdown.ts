import { assertKnownKeys } from './assert-known-keys.js'
import { toCore } from './internal/runtime-core.js'
import { ShutdownState } from './internal/shutdown-state.js'
import { validateMs } from './internal/validate.js'
import type { Runtime } from './runtime.js'

/**
 * `drain` lets parked and queued tasks run to the end; `cancel` cancels them
 * (reason `shutdown`) and aborts running bodies.
 *
 * @example
 * ```ts
 * const mode: ShutdownMode = 'drain'
 * ```
 */
export type ShutdownMode = 'drain' | 'cancel'

/**
 * Options of {@link shutdown}.
 *
 * @example
 * ```ts
 * const options: ShutdownOptions = { mode: 'drain', deadline: 10_000 }
 * ```
 */
export interface ShutdownOptions {
  /** Default `drain`. */
  mode?: ShutdownMode | undefined
  /** ms after which a drain escalates to cancel and bodies still running are abandoned. Default: none. */
  deadline?: number | undefined
}

/**
 * What happened during a shutdown, counted over the tasks that settled while
 * it ran.
 *
 * @example
 * ```ts
 * const { completed, cancelled, abandoned } = await shutdown(runtime)
 * ```
 */
export interface ShutdownReport {
  /** The final mode: `cancel` if a drain escalated or was taken over. */
  readonly mode: ShutdownMode
  /** Tasks that reached `success` or `error`. */
  readonly completed: number
  /** Tasks that were cancelled, including calls refused because the runtime was closing. */
  readonly cancelled: number
  /** Bodies still running (ignoring their signal) when the deadline passed. */
  readonly abandoned: number
  /** Errors thrown by plugin shutdown listeners and disposers; each of them still ran. */
  readonly errors: readonly unknown[]
}

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
