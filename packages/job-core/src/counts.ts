import { toCore } from './internal/runtime-core.js'
import type { Runtime } from './runtime.js'

/**
 * How much work a runtime holds now, read from counters the kernel keeps as
 * tasks move (nothing is walked or built but this object).
 *
 * @example
 * ```ts
 * const { queued, running } = counts(runtime)
 * if (queued > 100) response.status(503)
 * ```
 */
export interface RuntimeCounts {
  /** Tasks not yet in a terminal state. */
  readonly live: number
  /** Live tasks neither queued nor running: parked (shaper, coordinator, dependencies, retry) or being dispatched. */
  readonly parked: number
  /** Tasks waiting for a slot (or for a paused or rate-limited runtime). */
  readonly queued: number
  /** Bodies holding a slot, a cancelled body that has not exited yet included. */
  readonly running: number
  /** The part of `running` whose task has already ended (cancelled or timed out, body still inside). */
  readonly exiting: number
}

/**
 * The runtime's counters: p-limit's `activeCount` / `pendingCount`, p-queue's
 * `size` / `pending`. O(1).
 *
 * @example
 * ```ts
 * const runtime = createRuntime({ concurrency: 2 })
 * for (let i = 0; i < 5; i++) run(runtime, work)
 * counts(runtime) // { live: 5, parked: 0, queued: 3, running: 2, exiting: 0 }
 * ```
 */
export function counts(runtime: Runtime): RuntimeCounts {
  const core = toCore(runtime, 'counts(runtime)')
  const live = core.live.size
  return {
    live,
    parked: live - core.queuedTasks - core.runningTasks,
    queued: core.queuedTasks,
    running: core.runningBodies,
    exiting: core.exitingBodies,
  }
}
