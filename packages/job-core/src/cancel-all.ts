import { cancelTask } from './internal/cancellation.js'
import { toCore } from './internal/runtime-handle.js'
import type { Runtime } from './types/task.js'

/**
 * Runs the backend's pre-cancel hooks (plugins register them, e.g. the
 * serialize coordinator's `resetAdmission`), then cancels every non-terminal
 * task with reason `abort`. The runtime stays open for new work.
 *
 * @example
 * ```ts
 * router.on('logout', () => cancelAll(runtime))
 * ```
 */
export function cancelAll(runtime: Runtime): void {
  const core = toCore(runtime, 'cancelAll(runtime)')
  core.backend.preCancel()
  for (const task of core.live.toArray()) cancelTask(task, 'abort')
}
