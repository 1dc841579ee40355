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
export { assertLease, fencingToken } from './fencing.js'
export type { FencingToken } from './fencing-token.js'
export {
  type CoordinatedCall,
  LEADER_CONTEXT_MAX_LENGTH,
  type LeaderContext,
} from './leader-context.js'
