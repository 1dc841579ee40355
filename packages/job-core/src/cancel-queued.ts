import { cancelTask } from './internal/cancellation.js'
import { toCore } from './internal/runtime-handle.js'
import type { Runtime } from './types/task.js'

/**
 * Cancels (reason `abort`) every task that has no body running — queued,
 * parked (shaper, coordinator, dependencies, retry wait) or being
 * dispatched — and leaves running bodies alone (p-queue's `clear()`, except
 * that every cancelled task's promise settles with a `CancelledError`).
 * Returns how many tasks it cancelled.
 *
 * @example
 * ```ts
 * const cancelled = cancelQueued(runtime)
 * await whenIdle(runtime) // the bodies that were running have finished
 * ```
 */
export function cancelQueued(runtime: Runtime): number {
  const core = toCore(runtime, 'cancelQueued(runtime)')
  let cancelled = 0
  for (const task of core.live.toArray()) {
    if (task.state === 'running' || task.outcome !== undefined) continue
    cancelTask(task, 'abort')
    cancelled++
  }
  return cancelled
}
