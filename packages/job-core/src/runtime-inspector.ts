import { inspectCore } from './internal/inspection.js'
import { toCore } from './internal/runtime-handle.js'
import type { RuntimeInspector } from './types/inspection.js'
import type { Runtime } from './types/task.js'
import { VERSION } from './version.js'

/**
 * The key of the inspector symbol: `Symbol.for(RUNTIME_INSPECTOR_KEY)`.
 *
 * @example
 * ```ts
 * const inspector = (runtime as any)[Symbol.for(RUNTIME_INSPECTOR_KEY)] as RuntimeInspector
 * ```
 */
export const RUNTIME_INSPECTOR_KEY = '@vega/job-core/inspector'

/**
 * The runtime's {@link RuntimeInspector}.
 *
 * @example
 * ```ts
 * const { lib } = getRuntimeInspector(runtime) // '@vega/job-core@1.0.0'
 * ```
 */
export function getRuntimeInspector(runtime: Runtime): RuntimeInspector {
  const core = toCore(runtime, 'getRuntimeInspector(runtime)')
  return {
    lib: `@vega/job-core@${VERSION}`,
    name: core.name,
    subscribe: (listener) => core.bus.subscribe(listener),
    inspect: () => inspectCore(core),
    now: () => core.clock.now(),
  }
}
