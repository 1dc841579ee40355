export { AggregateDispatcher } from './aggregate-dispatcher.js'
export type { AggregateExchange, AggregateId, ExchangeHandler } from './aggregate-exchange.js'
export {
  type AggregateSchedulerSupplier,
  DefaultAggregateSchedulerSupplier,
} from './aggregate-scheduler-supplier.js'
export {
  type AggregateSchedulingOptions,
  type AggregateSchedulingPlugin,
  createAggregateScheduling,
  installAggregateScheduling,
  type SchedulerStatsEvent,
} from './aggregate-scheduling.js'
export { BorrowedAggregateSchedulerSupplier } from './borrowed-aggregate-scheduler-supplier.js'
export { CompositeDispatcher, type CompositeDispatcherOptions } from './composite-dispatcher.js'
export type {
  AggregateDispatcherOptions,
  DispatcherErrorPolicy,
  DispatcherState,
} from './dispatcher-options.js'
export type { GracefullyStoppable } from './gracefully-stoppable.js'
export { DEFAULT_PARALLELISM, javaStringHashCode, toGroupKey } from './group-key.js'
export { immediateScheduler } from './immediate-scheduler.js'
export {
  createLifecycle,
  type Lifecycle,
  type LifecycleComponent,
  type LifecycleOptions,
  type LifecycleState,
  type LifecycleTimers,
  type StopReport,
} from './lifecycle.js'
export {
  type NamedAggregate,
  type NamedAggregateLike,
  toNamedAggregate,
} from './named-aggregate.js'
export { createParallelScheduler, type ParallelScheduler } from './parallel-scheduler.js'
export type { ScheduledWork, Scheduler } from './scheduler.js'
export type { AggregateStats, LatencySummary, SchedulingStats } from './stats.js'
export {
  type AggregateBinding,
  type AggregateRoute,
  aggregateTag,
  withAggregate,
} from './with-aggregate.js'
