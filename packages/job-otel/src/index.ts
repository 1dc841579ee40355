export {
  type DedupeCall,
  dedupeTraceContext,
  type LeaderContextLike,
} from './dedupe-trace-context.js'
export { installTracing } from './install-tracing.js'
export type { AttemptsMode, TaskAttributes, TracedTaskInfo, TracingOptions } from './options.js'
export {
  type AggregateBusLike,
  type AggregateDelivery,
  type TraceAggregateBusOptions,
  traceAggregateBus,
} from './trace-aggregate-bus.js'
export { VERSION } from './version.js'
