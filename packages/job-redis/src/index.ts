export {
  type AggregateBusConsumer,
  assertLease,
  type BusMessage,
  type BusRetryPolicy,
  type ConsumerStats,
  type CoordinatedCall,
  type DeadLetter,
  type Delivery,
  type DeliveryHandler,
  type FencingToken,
  fencingToken,
  LEADER_CONTEXT_MAX_LENGTH,
  type LeaderContext,
  type PartitionStats,
  type SendReceipt,
  type StopOptions,
  type StopReport,
} from '@vega/job-distributed'
export { createRedisAggregateBus } from './aggregate-bus.js'
export type { ConsumeOptions, RedisAggregateBus, RedisAggregateBusOptions } from './bus-types.js'
export { type Codec, jsonCodec } from './codec.js'
export {
  createRedisCoordination,
  type RedisCoordination,
  type RedisCoordinationCounters,
  type RedisCoordinationOptions,
  type RedisSerializeOptions,
} from './create-redis-coordination.js'
export {
  isLeaseLostError,
  isRedisUnavailableError,
  isRemoteTaskError,
  LeaseLostError,
  RedisUnavailableError,
  RemoteTaskError,
} from './errors.js'
