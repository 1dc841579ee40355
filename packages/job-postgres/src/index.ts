export {
  type AggregateBusConsumer,
  assertLease,
  type BusMessage,
  type BusRetryPolicy,
  type Codec,
  type ConsumerStats,
  type DeadLetter,
  type Delivery,
  type DeliveryHandler,
  type FencingToken,
  fencingToken,
  isLeaseLostError,
  isRemoteTaskError,
  jsonCodec,
  LEADER_CONTEXT_MAX_LENGTH,
  type LeaderContext,
  LeaseLostError,
  type PartitionStats,
  RemoteTaskError,
  type SendReceipt,
  type StopOptions,
  type StopReport,
} from '@vega/job-distributed'
export { createPostgresAggregateBus } from './aggregate-bus.js'
export type {
  ConsumeOptions,
  PostgresAggregateBus,
  PostgresAggregateBusOptions,
  SendOptions,
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
