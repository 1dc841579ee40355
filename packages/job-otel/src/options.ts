import type { Attributes, Meter, Tracer } from '@opentelemetry/api'

/**
 * How attempts show: `'spans'` (the default) gives each attempt a child span
 * of the task span, from body entry to body exit, and runs the body with it
 * active; `'events'` adds a `vega.job.attempt` span event to the task span
 * per attempt and runs the body with the task span active.
 *
 * @example
 * ```ts
 * const mode: AttemptsMode = 'events' // one span per task, even with retries
 * ```
 */
export type AttemptsMode = 'spans' | 'events'

/**
 * What {@link TracingOptions.attributes} is told about a task, at `run()`.
 *
 * @example
 * ```ts
 * const info: TracedTaskInfo = { id: 7, label: 'load user', key: '["user",42]', runtime: 'api' }
 * ```
 */
export interface TracedTaskInfo {
  /** The task's id (`task.id`). */
  readonly id: number
  /** `RunOptions.label`, when one was given. */
  readonly label: string | undefined
  /** The key hash, when a coordinator or shaper binds the task. */
  readonly key: string | undefined
  /** The runtime's name. */
  readonly runtime: string
}

/**
 * Extra attributes for a task span, read once at `run()`. One that throws or
 * returns something other than an object adds nothing (reported through
 * OpenTelemetry's `diag`); the `vega.job.*` attributes always win.
 *
 * @example
 * ```ts
 * const attributes: TaskAttributes = (task) => ({ 'app.tenant': tenantOf(task.label) })
 * ```
 */
export type TaskAttributes = (task: TracedTaskInfo) => Attributes

/**
 * Options of {@link installTracing}; every one is optional.
 *
 * @example
 * ```ts
 * const options: TracingOptions = {
 *   tracer: trace.getTracer('checkout'),
 *   attempts: 'spans',
 *   attributes: (task) => ({ 'app.queue': task.runtime }),
 * }
 * ```
 */
export interface TracingOptions {
  /** Default `trace.getTracer('@vega/job-otel', VERSION)`. */
  tracer?: Tracer | undefined
  /** Default `metrics.getMeter('@vega/job-otel', VERSION)`; register the MeterProvider before installing. */
  meter?: Meter | undefined
  /** Default `'spans'`. */
  attempts?: AttemptsMode | undefined
  /** Extra task span attributes, read once at `run()`. */
  attributes?: TaskAttributes | undefined
}
