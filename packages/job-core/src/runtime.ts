import { RuntimeCore } from './internal/runtime-core.js'
import { RUNTIME_BRAND, THIS_COPY } from './internal/runtime-handle.js'
import { getRuntimeInspector, RUNTIME_INSPECTOR_KEY } from './runtime-inspector.js'
import type { RuntimeOptions } from './types/runtime.js'
import type { Runtime } from './types/task.js'

/**
 * Creates a runtime. Throws `RangeError` for a bad `concurrency` and
 * `TypeError` for malformed options.
 *
 * @example
 * ```ts
 * const runtime = createRuntime({ concurrency: 4 })
 * const value = await run(runtime, async () => 42)
 * ```
 */
export function createRuntime(options: RuntimeOptions = {}): Runtime {
  const core = new RuntimeCore(options)
  const handle = core.handle
  // Non-enumerable: tools that cannot import core (or that hold another copy)
  // find the inspector and the copy's name by Symbol.for.
  Object.defineProperty(handle, Symbol.for(RUNTIME_INSPECTOR_KEY), {
    get: () => getRuntimeInspector(handle),
  })
  Object.defineProperty(handle, RUNTIME_BRAND, { value: THIS_COPY })
  return Object.freeze(handle)
}
