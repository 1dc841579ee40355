export {
  assertLease,
  type Codec,
  type FencingToken,
  fencingToken,
  isLeaseLostError,
  isRemoteTaskError,
  jsonCodec,
  LEADER_CONTEXT_MAX_LENGTH,
  type LeaderContext,
  LeaseLostError,
  RemoteTaskError,
} from '@vega/job-distributed'
export { createPostgresAggregateBus } from './aggregate-bus.js'
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
  PostgresAggregateBus,
  PostgresAggregateBusOptions,
  SendOptions,
  SendReceipt,
  StopOptions,
  StopReport,
  TransactionalDelivery,
  TransactionalHandler,
} from './bus-types.js'
export {
  createPostgresCoordination,
  type PostgresCoordination,
  type PostgresCoordinationOptions,
} from './create-postgres-coordination.js'
export { isPostgresUnavailableError, PostgresUnavailableError } from './errors.js'
export type { PostgresPool } from './pool.js'
export { type MigrateOptions, type MigrateReport, migrate, SCHEMA_VERSION } from './schema.js'
