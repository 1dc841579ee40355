import type { Backend } from './backend.js'
import type { Clock } from './clock.js'
import { RuntimeCore } from './internal/runtime-core.js'
import type { Plugin } from './plugin.js'
import { getRuntimeInspector, RUNTIME_INSPECTOR_KEY } from './runtime-inspector.js'

/**
 * A task runtime: the registry of live tasks, the backend with its slots, the
 * clock and the event bus. Opaque: use the free functions (`run`,
 * `subscribe`, `cancelAll`, `shutdown`, `inspect`) on it.
 *
 * @example
 * ```ts
 * const runtime: Runtime = createRuntime({ name: 'api', concurrency: 8 })
 * ```
 */
export interface Runtime {
  readonly name: string
}

/**
 * Options of {@link createRuntime}.
 *
 * @example
 * ```ts
 * const options: RuntimeOptions = { name: 'ui', concurrency: 4, plugins: [] }
 * ```
 */
export interface RuntimeOptions {
  /** Shown in devtools; default `runtime-<n>`. */
  name?: string
  /** The most bodies running at once; default `Infinity`. A positive integer. Not with `backend`. */
  concurrency?: number
  /** Replaces the default priority backend (which then owns the concurrency limit). */
  backend?: Backend
  /** Installed in order; disposed in reverse order at shutdown. */
  plugins?: readonly Plugin[]
  /** Every kernel timer goes through it; default the system clock. */
  clock?: Clock
  /** The source of retry jitter; default `Math.random`. Inject for deterministic delays. */
  random?: () => number
}

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
  // Non-enumerable and lazy: tools that cannot import core find it by Symbol.for.
  Object.defineProperty(core, Symbol.for(RUNTIME_INSPECTOR_KEY), {
    get: () => getRuntimeInspector(core),
  })
  return core
}
