export {
  assertLease,
  type CoordinatedCall,
  type FencingToken,
  fencingToken,
  LEADER_CONTEXT_MAX_LENGTH,
  type LeaderContext,
} from '@vega/job-distributed'
export { createRedisAggregateBus } from './aggregate-bus.js'
export type {
  AggregateBusConsumer,
  BusMessage,
  BusRetryPolicy,
  ConsumeOptions,
  ConsumerStats,
  DeadLetter,
  Delivery,
  DeliveryHandler,
  PartitionStats,
  RedisAggregateBus,
  RedisAggregateBusOptions,
  SendReceipt,
  StopOptions,
  StopReport,
} from './bus-types.js'
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
