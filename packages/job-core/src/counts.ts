import { toCore } from './internal/runtime-handle.js'
import type { RuntimeCounts } from './types/inspection.js'
import type { Runtime } from './types/task.js'

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
    running: core.bodies.running,
    exiting: core.bodies.exiting,
  }
}
