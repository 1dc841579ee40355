import type { RuntimeListener } from './events.js'
import type { RuntimeInspection } from './inspect.js'
import { inspectCore } from './internal/inspection.js'
import { toCore } from './internal/runtime-core.js'
import type { Runtime } from './runtime.js'
import { VERSION } from './version.js'

/**
 * What tools read from a runtime without importing `@vega/job-core` at run
 * time: a devtools bridge whose dependency on core is optional reads it from
 * `runtime[Symbol.for(RUNTIME_INSPECTOR_KEY)]`, a string protocol that works
 * across copies of the package.
 *
 * @example
 * ```ts
 * const inspector = getRuntimeInspector(runtime)
 * inspector.subscribe((e) => send(e))
 * console.log(inspector.lib, inspector.inspect().tasks.length, inspector.now())
 * ```
 */
export interface RuntimeInspector {
  /** `@vega/job-core@<version>` of the core that created the runtime. */
  readonly lib: string
  readonly name: string
  subscribe(listener: RuntimeListener): () => void
  inspect(): RuntimeInspection
  /** The runtime clock's time, the same as events' `at`. */
  now(): number
}

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
