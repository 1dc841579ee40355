export { type Answer, bounded, boundedTo, type Unavailable } from './bounded.js'
export {
  type AckVerdict,
  type AttemptOutcome,
  type BusEngine,
  type BusEntry,
  BusPartition,
  type BusPartitionState,
  type BusReader,
  type BusReaderContext,
  type BusWakeHooks,
  type BusWakeups,
  type LeaseTick,
} from './bus/bus-engine.js'
export type {
  AggregateBusConsumer,
  BusMessage,
  BusRetryPolicy,
  ConsumerStats,
  DeadLetter,
  Delivery,
  DeliveryHandler,
  PartitionStats,
  SendReceipt,
  StopOptions,
  StopReport,
} from './bus/bus-types.js'
export {
  type BusConsumerConfig,
  busConsumerId,
  busWarning,
  checkBusAggregate,
  checkBusInteger,
  checkBusMessage,
  createBusConsumer,
  describeBusValue,
  prepareBusConsumer,
  type ResolvedRetry,
  resolveBusOptions,
  resolveConsumeOptions,
} from './bus/create-bus-consumer.js'
export { BusReadLoop } from './bus/read-loop.js'
export { type Codec, jsonCodec } from './codec.js'
export {
  createDistributedCoordination,
  type DistributedCoordination,
  type DistributedCounters,
  type DistributedInspection,
  type DistributedSerializeOptions,
  type DistributedSetup,
} from './create-coordination.js'
export { type Deferred, deferred } from './deferred.js'
export type {
  AcquireMode,
  AcquireReply,
  AcquireRequest,
  CoordinationEngine,
  HandOff,
  LeaseVerdict,
  ReleaseKind,
  WakeListener,
  WakeMessage,
} from './engine.js'
export { isLeaseLostError, isRemoteTaskError, LeaseLostError, RemoteTaskError } from './errors.js'
export { assertLease, fencingToken } from './fencing.js'
export type { FencingToken } from './fencing-token.js'
export { pause } from './internal/bus/pause.js'
export {
  type CoordinatedCall,
  checkLeaderContext,
  LEADER_CONTEXT_MAX_LENGTH,
  type LeaderContext,
} from './leader-context.js'
export {
  type CommonCoordinationOptions,
  describeValue,
  type ResolvedCoordinationOptions,
  resolveCoordinationOptions,
} from './options.js'
