import { inspectCore } from './internal/inspection.js'
import { toCore } from './internal/runtime-handle.js'
import type { RuntimeInspection } from './types/inspection.js'
import type { Runtime } from './types/task.js'

/**
 * Reports the runtime's live tasks and internal sizes, for devtools
 * snapshots, tests and leak checks.
 *
 * @example
 * ```ts
 * await settle(task)
 * inspect(runtime).sizes.liveTasks // 0
 * ```
 */
export function inspect(runtime: Runtime): RuntimeInspection {
  return inspectCore(toCore(runtime, 'inspect(runtime)'))
}
