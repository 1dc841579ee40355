/** The instrumentation scope of the default tracer and meter. */
export const SCOPE = '@vega/job-otel'

/** Attribute keys, in one place so spans, events and metrics agree. */
export const ATTR = {
  taskId: 'vega.job.task.id',
  label: 'vega.job.label',
  runtime: 'vega.job.runtime',
  key: 'vega.job.key',
  attempts: 'vega.job.attempts',
  attempt: 'vega.job.attempt',
  result: 'vega.job.result',
  waitDuration: 'vega.job.wait.duration',
  cancelReason: 'vega.job.cancel.reason',
  cancelledBy: 'vega.job.cancelled_by',
  parkReason: 'vega.job.park.reason',
  link: 'vega.job.link',
  state: 'vega.job.state',
  errorType: 'error.type',
} as const

/** Span event names. */
export const EVENT = {
  queued: 'vega.job.queued',
  parked: 'vega.job.parked',
  attempt: 'vega.job.attempt',
  exception: 'exception',
} as const

/** How a task ended, in the CI/CD vocabulary of OpenTelemetry's semantic conventions. */
export type TaskResult = 'success' | 'error' | 'timeout' | 'cancellation' | 'skip'

/** Why a span links to another: shared work (`reuse`) or replaced work (`restart`, `supersede`). */
export type LinkKind = 'reuse' | 'restart' | 'supersede'

/** `vega.job {label}`, or `vega.job` for a task without a label. */
export function taskSpanName(label: string | undefined): string {
  return label === undefined ? 'vega.job' : `vega.job ${label}`
}

/** `vega.job.attempt {label}`, or `vega.job.attempt` for a task without a label. */
export function attemptSpanName(label: string | undefined): string {
  return label === undefined ? 'vega.job.attempt' : `vega.job.attempt ${label}`
}
