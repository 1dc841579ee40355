import { diag } from '@opentelemetry/api'
import type { Runtime, Task } from '@vega/job-core'
import { fromCarrier, toCarrier } from './internal/trace-context.js'
import { tracersOf } from './internal/tracers.js'

/**
 * A dedupe call as {@link LeaderContextLike} is told about it (the shape of
 * `@vega/job-redis`'s `CoordinatedCall`).
 *
 * @example
 * ```ts
 * const call: DedupeCall = { runtime, task: run(runtime, loadDoc) }
 * ```
 */
export interface DedupeCall {
  readonly runtime: Runtime
  readonly task: Task<unknown>
}

/**
 * What {@link dedupeTraceContext} is: the shape of `@vega/job-redis`'s
 * `LeaderContext` (the `leaderContext` option of `createRedisCoordination`),
 * so this package needs no dependency on it.
 *
 * @example
 * ```ts
 * const leaderContext: LeaderContextLike = dedupeTraceContext
 * ```
 */
export interface LeaderContextLike {
  lead(call: DedupeCall): string | undefined
  joined(call: DedupeCall, context: string): void
}

// `@vega/job-redis` refuses a longer context (its LEADER_CONTEXT_MAX_LENGTH).
const MAX_LENGTH = 1024

/**
 * Links a `@vega/job-redis` dedupe joiner to the leader's task span in
 * another process: pass it as `createRedisCoordination`'s `leaderContext` in
 * every process. Each `cluster.dedupe` call hands over its task span's W3C
 * context (`traceparent`, then `tracestate` after a space), which travels
 * with its lease; a call that gets a leader's outcome from another process
 * (or another runtime) has its task span link to that leader's task span,
 * with `vega.job.link` = `reuse`, as a joiner of its own runtime does.
 *
 * It reads the spans of the runtimes traced by `installTracing` (of this
 * copy of the package): a call on a runtime without tracing carries no
 * context and gets no link. A context that cannot be read adds no link
 * (reported through OpenTelemetry's `diag`); it never fails the call.
 *
 * @example
 * ```ts
 * import { createRedisCoordination } from '@vega/job-redis'
 * import { dedupeTraceContext, installTracing } from '@vega/job-otel'
 *
 * const cluster = createRedisCoordination({ redis, prefix: 'vj', leaseMs: 10_000, leaderContext: dedupeTraceContext })
 * const runtime = createRuntime({ plugins: [installCoordination, cluster.plugin] })
 * installTracing(runtime)
 * await run(runtime, withCoordinator(loadReport, cluster.dedupe, { key: ['report', 7] }))
 * // joined a leader in another process: span 'vega.job' links to its task span ('reuse')
 * ```
 */
export const dedupeTraceContext: LeaderContextLike = Object.freeze({
  lead(call: DedupeCall): string | undefined {
    for (const tracer of tracersOf(call.runtime)) {
      const spanContext = tracer.spanContextOf(call.task.id)
      const carrier = spanContext === undefined ? undefined : toCarrier(spanContext)
      if (carrier === undefined) continue
      const { traceparent, tracestate } = carrier
      if (tracestate === undefined) return traceparent
      const text = `${traceparent} ${tracestate}`
      // An oversized trace state stays behind: the link needs only the span's ids.
      return text.length > MAX_LENGTH ? traceparent : text
    }
    return undefined
  },

  joined(call: DedupeCall, context: string): void {
    const at = context.indexOf(' ')
    const remote = fromCarrier(
      at === -1
        ? { traceparent: context }
        : { traceparent: context.slice(0, at), tracestate: context.slice(at + 1) },
    )
    if (remote === undefined) {
      diag.warn(
        `@vega/job-otel: dedupeTraceContext: the dedupe leader's context ${JSON.stringify(context.slice(0, 80))} is not a W3C traceparent; task #${call.task.id} gets no link.`,
      )
      return
    }
    for (const tracer of tracersOf(call.runtime)) tracer.linkRemote(call.task.id, remote, 'reuse')
  },
})
