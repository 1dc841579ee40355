import type {
  AggregateBusConsumer,
  BusMessage,
  BusRetryPolicy,
  DeadLetter,
  DeliveryHandler,
  SendReceipt,
} from '@vega/job-distributed'
import type { Cluster, Redis } from 'ioredis'
import type { Codec } from './codec.js'

/**
 * Options of {@link createRedisAggregateBus}.
 *
 * @example
 * ```ts
 * const options: RedisAggregateBusOptions = { redis: new Redis(), prefix: 'vj', partitions: 64, leaseMs: 10_000 }
 * ```
 */
export interface RedisAggregateBusOptions {
  /**
   * An open ioredis client: of one primary (`new Redis(url)`) or of a Redis
   * Cluster (`new Cluster(nodes)`). The bus never closes it; each consumer
   * opens one duplicate for its sharded pub/sub wake-ups.
   */
  redis: Redis | Cluster
  /** Starts every key; producers and consumers of a bus share it. Non-empty, no whitespace. */
  prefix: string
  /**
   * Streams per aggregate (an integer 1 … 16 384). An id lives in partition
   * `toGroupKey(id, partitions)`, as in a JVM Wow service; every producer and
   * consumer must use the same number.
   */
  partitions: number
  /** How long a partition's lease holds without renewal, in ms (integer ≥ 30). Consumers renew every leaseMs / 3. */
  leaseMs: number
  /** How bodies travel; strict JSON by default. */
  codec?: Codec
  /** `send`, `stats` and the release at stop fail with `RedisUnavailableError` after this many ms; default min(leaseMs, 5000). */
  connectTimeoutMs?: number
}

/**
 * Options of {@link RedisAggregateBus.consume}.
 *
 * @example
 * ```ts
 * const consumer = bus.consume('sales.Order', handle, { parallelism: 16, retry: { attempts: 5 } })
 * ```
 */
export interface ConsumeOptions {
  /** Handlers in flight at once in this consumer (distinct ids); default 16. */
  parallelism?: number
  /** Total attempts as a number, or a {@link BusRetryPolicy}; default 3 attempts. */
  retry?: number | BusRetryPolicy
}

/**
 * What {@link createRedisAggregateBus} returns.
 *
 * @example
 * ```ts
 * const bus: RedisAggregateBus = createRedisAggregateBus({ redis, prefix: 'vj', partitions: 64, leaseMs: 10_000 })
 * ```
 */
export interface RedisAggregateBus {
  readonly partitions: number
  /** Appends to the id's partition stream. Throws `TypeError` at once for a bad message; rejects with `RedisUnavailableError` when Redis does not answer. */
  send<B>(message: BusMessage<B>): Promise<SendReceipt>
  /** Starts a consumer of `aggregate` in this process; it joins the others and takes its share of partitions. */
  consume<B = unknown>(
    aggregate: string,
    handler: DeliveryHandler<B>,
    options?: ConsumeOptions,
  ): AggregateBusConsumer
  /** The oldest `count` (default 100) dead letters of the aggregate, over every partition's dead-letter stream, by entry id. */
  deadLetters<B = unknown>(aggregate: string, count?: number): Promise<DeadLetter<B>[]>
}
