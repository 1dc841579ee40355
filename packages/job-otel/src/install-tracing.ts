import { type Meter, metrics, type Tracer, trace } from '@opentelemetry/api'
import {
  assertKnownKeys,
  type EventBus,
  getEventBus,
  type Runtime,
  wrapAttempts,
} from '@vega/job-core'
import { describeValue } from './internal/errors.js'
import { SCOPE } from './internal/names.js'
import { isNoopMeter, isNoopTracer } from './internal/noop.js'
import { TaskMetrics } from './internal/task-metrics.js'
import { TaskTracer } from './internal/task-tracer.js'
import { registerTracer } from './internal/tracers.js'
import type { AttemptsMode, TracingOptions } from './options.js'
import { VERSION } from './version.js'

const WHERE = 'installTracing(runtime, options)'
const KNOWN_KEYS = ['tracer', 'meter', 'attempts', 'attributes'] as const

/**
 * Traces every task `runtime` creates from now on as OpenTelemetry spans
 * and metrics: a task span from `run()` to the terminal state, parented by
 * the context active at `run()`; an attempt span per body run, active while
 * the body runs, also after waiting in the queue or behind a coordinator,
 * a shaper, dependencies or a retry delay; span events for waits; links for
 * dedupe, restart and supersede; `vega.job.duration`,
 * `vega.job.wait.duration`, `vega.job.attempts` and `vega.job.tasks`.
 *
 * Returns `uninstall`: no task created after it gets a span; spans already
 * open still end, and once the last one has, nothing of the tracing is left
 * on the runtime (no listener, no attempt wrapper, no metrics callback).
 * Calling it again does nothing.
 *
 * With neither a tracer nor a meter behind the API (no SDK registered when
 * this is called, and none passed), it installs nothing at all and costs
 * nothing: register the SDK first. Throws `TypeError` for a runtime that is
 * not one, a `tracer` or `meter` that is not one, `attempts` other than
 * `'spans'` or `'events'`, a non-function `attributes`, or an unknown option.
 *
 * @example
 * ```ts
 * import { trace } from '@opentelemetry/api'
 * import { createRuntime, run } from '@vega/job-core'
 * import { installTracing } from '@vega/job-otel'
 *
 * const runtime = createRuntime({ name: 'api', concurrency: 4 })
 * const uninstall = installTracing(runtime, { tracer: trace.getTracer('api') })
 * await run(runtime, async () => fetchUser(42), { label: 'load user' })
 * // span 'vega.job load user' → child 'vega.job.attempt load user'
 * uninstall()
 * ```
 */
export function installTracing(runtime: Runtime, options: TracingOptions = {}): () => void {
  assertKnownKeys(WHERE, options, KNOWN_KEYS)
  const bus = busOf(runtime)
  // Only a missing option takes the default: `null` is a bad tracer, not none.
  const tracer = options.tracer === undefined ? trace.getTracer(SCOPE, VERSION) : options.tracer
  const meter = options.meter === undefined ? metrics.getMeter(SCOPE, VERSION) : options.meter
  checkTracer(tracer)
  checkMeter(meter)
  const attempts = attemptsMode(options.attempts)
  const attributes = options.attributes
  if (attributes !== undefined && typeof attributes !== 'function') {
    throw new TypeError(
      `${WHERE}: attributes must be a function (task) => ({ … }), got ${describeValue(attributes)}.`,
    )
  }
  // Nothing would be recorded: no listener, no wrapper, no cost.
  if (isNoopTracer(tracer) && isNoopMeter(meter)) return () => {}

  const taskMetrics = new TaskMetrics(meter, runtime)
  const tracing = new TaskTracer({
    tracer,
    metrics: taskMetrics,
    attempts,
    attributes,
    runtimeName: runtime.name,
  })
  const unsubscribe = bus.subscribe(tracing.listener)
  const unwrap = wrapAttempts(runtime, tracing.wrapper)
  const unregister = registerTracer(runtime, tracing)
  tracing.onDrained = () => {
    tracing.onDrained = undefined
    unsubscribe()
    unwrap()
    unregister()
  }
  let installed = true
  return () => {
    if (!installed) return
    installed = false
    taskMetrics.stopObserving()
    tracing.stopAccepting()
  }
}

function busOf(runtime: Runtime): EventBus {
  try {
    return getEventBus(runtime)
  } catch (error) {
    throw new TypeError(
      `${WHERE}: runtime must be a runtime from createRuntime(), got ${describeValue(runtime)}.`,
      { cause: error },
    )
  }
}

function checkTracer(tracer: Tracer): void {
  if (typeof tracer !== 'object' || tracer === null || typeof tracer.startSpan !== 'function') {
    throw new TypeError(
      `${WHERE}: tracer must be an OpenTelemetry Tracer (with startSpan), got ${describeValue(tracer)}. Pass trace.getTracer('my-app') or leave it out.`,
    )
  }
}

function checkMeter(meter: Meter): void {
  if (
    typeof meter !== 'object' ||
    meter === null ||
    typeof meter.createHistogram !== 'function' ||
    typeof meter.createObservableUpDownCounter !== 'function'
  ) {
    throw new TypeError(
      `${WHERE}: meter must be an OpenTelemetry Meter (with createHistogram and createObservableUpDownCounter), got ${describeValue(meter)}. Pass metrics.getMeter('my-app') or leave it out.`,
    )
  }
}

function attemptsMode(value: unknown): AttemptsMode {
  if (value === undefined) return 'spans'
  if (value === 'spans' || value === 'events') return value
  throw new TypeError(
    `${WHERE}: attempts must be 'spans' or 'events', got ${describeValue(value)}.`,
  )
}
