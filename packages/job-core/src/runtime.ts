import type { Backend } from './backend.js'
import type { Clock } from './clock.js'
import type {
  OverflowPolicy,
  RateLimitOptions,
  RunDefaults,
  UnobservedErrorHandler,
} from './control-options.js'
import { RuntimeCore } from './internal/runtime-core.js'
import { RUNTIME_BRAND, THIS_COPY } from './internal/runtime-handle.js'
import type { Plugin } from './plugin.js'
import { getRuntimeInspector, RUNTIME_INSPECTOR_KEY } from './runtime-inspector.js'

/**
 * A task runtime: the registry of live tasks, the backend with its slots, the
 * clock and the event bus. A handle that exposes its `name` and nothing else
 * (frozen; its state is private): use the free functions (`run`,
 * `subscribe`, `cancelAll`, `shutdown`, `inspect`) on it. A runtime works
 * only with the copy of the package that created it.
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
  /**
   * Defaults for every `run()` / `ctx.run()` of this runtime (`timeout`,
   * `retry`, `priority`), merged under the call's own options: the call
   * always wins; `timeout` merges field by field.
   *
   * @example
   * ```ts
   * createRuntime({ defaults: { timeout: { attempt: 5_000, total: 30_000 }, retry: 3 } })
   * ```
   */
  defaults?: RunDefaults | undefined
  /**
   * At most `limit` body starts per `interval` ms (`window: 'sliding'`, the
   * default, or `'fixed'`, like p-queue's `intervalCap`). Waiting for the
   * window is `queued`; timers come from the runtime clock; a retry counts as
   * a start. The backend must support `setGate`.
   *
   * @example
   * ```ts
   * createRuntime({ concurrency: 4, rateLimit: { limit: 10, interval: 1_000 } })
   * ```
   */
  rateLimit?: RateLimitOptions | undefined
  /**
   * Backpressure: the most tasks waiting in `queued`; default `Infinity`.
   * A task that would exceed it is handled by `overflow`. Retries and tasks
   * that find a free slot at once are never refused.
   *
   * @example
   * ```ts
   * const task = run(createRuntime({ concurrency: 1, maxQueued: 0 }), work)
   * ```
   */
  maxQueued?: number | undefined
  /**
   * What a full queue does (only with `maxQueued`): `'reject-new'` (default)
   * cancels the new task, `'drop-oldest'` the longest-waiting task of the
   * lowest priority; reason `'overflow'` either way.
   *
   * @example
   * ```ts
   * createRuntime({ concurrency: 2, maxQueued: 100, overflow: 'drop-oldest' })
   * ```
   */
  overflow?: OverflowPolicy | undefined
  /**
   * ms after which a body that was told to stop (its task cancelled or timed
   * out, or its attempt timed out) and still has not exited is abandoned: its
   * slot is released and `task:abandoned` is emitted; its eventual exit emits
   * `task:exited { abandoned: true }`. Default `Infinity`: slots stay honest.
   *
   * @example
   * ```ts
   * createRuntime({ concurrency: 1, abandonAfter: 5_000 })
   * ```
   */
  abandonAfter?: number | undefined
  /**
   * Reports a task that ended in `error` while nobody observed it (by the
   * end plus one macrotask). Default: `console.error` once per task; a
   * function replaces that; `false` turns it off. Observed failures are never
   * reported.
   *
   * @example
   * ```ts
   * createRuntime({ onUnobservedError: (error, task) => log.error({ err: error, id: task.id }) })
   * ```
   */
  onUnobservedError?: UnobservedErrorHandler | false | undefined
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
  const handle = core.handle
  // Non-enumerable: tools that cannot import core (or that hold another copy)
  // find the inspector and the copy's name by Symbol.for.
  Object.defineProperty(handle, Symbol.for(RUNTIME_INSPECTOR_KEY), {
    get: () => getRuntimeInspector(handle),
  })
  Object.defineProperty(handle, RUNTIME_BRAND, { value: THIS_COPY })
  return Object.freeze(handle)
}
