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
  name?: string | undefined
  /**
   * The most bodies running at once: a positive integer, or `Infinity` (the
   * default). A cancelled body that ignores its signal keeps its slot until
   * it exits. Not together with `backend`, which then owns the limit.
   */
  concurrency?: number | undefined
  /** Replaces the default priority backend (which then owns the concurrency limit). */
  backend?: Backend | undefined
  /** Installed in order; disposed in reverse order at shutdown. */
  plugins?: readonly Plugin[] | undefined
  /** Every kernel timer goes through it; default the system clock. Pass `createTestClock()` for fake time. */
  clock?: Clock | undefined
  /** The source of retry jitter, returning numbers in [0, 1); default `Math.random`. Inject for deterministic delays. */
  random?: (() => number) | undefined
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
