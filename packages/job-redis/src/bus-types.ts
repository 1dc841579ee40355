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
 * One command or event for an aggregate instance.
 *
 * @example
 * ```ts
 * const message: BusMessage<{ type: 'pay' }> = { aggregate: 'sales.Order', id: 'order-7', body: { type: 'pay' } }
 * ```
 */
export interface BusMessage<B = unknown> {
  /** The named aggregate, `"context.Aggregate"`. */
  readonly aggregate: string
  /** The aggregate id: it chooses the partition, and messages of one id are handled in send order. */
  readonly id: string
  readonly body: B
}

/**
 * Where {@link RedisAggregateBus.send} put a message.
 *
 * @example
 * ```ts
 * const { partition, entryId } = await bus.send({ aggregate: 'sales.Order', id: 'order-7', body })
 * ```
 */
export interface SendReceipt {
  readonly partition: number
  /** The Redis stream entry id (`<ms>-<seq>`). */
  readonly entryId: string
}

/**
 * What a handler receives: the message, and how it was delivered.
 *
 * @example
 * ```ts
 * const handle: DeliveryHandler<Command> = async (delivery, signal) => {
 *   if (delivery.attempt > 1) log.info('redelivered', delivery.entryId)
 *   await orders.apply(delivery.id, delivery.body, { fence: delivery.fence, signal })
 * }
 * ```
 */
export interface Delivery<B = unknown> {
  readonly aggregate: string
  readonly id: string
  readonly body: B
  readonly partition: number
  readonly entryId: string
  /**
   * 1 on the first delivery. More when it may have been handled before: a
   * retry after the handler threw, or a redelivery after its consumer died,
   * was fenced out or handed the partition over before acknowledging.
   */
  readonly attempt: number
  /**
   * The partition lease's fencing token: it grows with every new owner of
   * the partition. Store it next to what the handler writes and refuse
   * writes with a smaller one, and a paused consumer's late write never counts.
   */
  readonly fence: number
  /** The consumer handling it. */
  readonly consumerId: string
}

/**
 * Handles one message. Its promise holds the id (the next message of the id
 * waits) until it settles and its acknowledgement is confirmed. The signal
 * aborts with `LeaseLostError` when the partition's lease is lost, or when a
 * stop's deadline passes.
 *
 * @example
 * ```ts
 * const handle: DeliveryHandler = async ({ id, body }, signal) => apply(id, body, signal)
 * ```
 */
export type DeliveryHandler<B = unknown> = (delivery: Delivery<B>, signal: AbortSignal) => unknown

/**
 * How often a handler that throws is tried before its message goes to the
 * dead-letter stream (the shape of `@vega/job-core`'s `RetryPolicy`).
 *
 * @example
 * ```ts
 * const retry: BusRetryPolicy = { attempts: 5, delay: (n) => 50 * n, retryIf: (e) => !(e instanceof TypeError) }
 * ```
 */
export interface BusRetryPolicy {
  /** Total attempts, the first included; an integer ≥ 1. */
  attempts: number
  /** ms before the next attempt: a number, or a function of the failed attempt (1-based) and its error. Default: exponential with full jitter, up to 100, 200, 400 … ms, capped at 30 s. */
  delay?: number | ((attempt: number, error: unknown) => number) | undefined
  /** Whether the error is worth another attempt; default every error. */
  retryIf?: ((error: unknown, attempt: number) => boolean) | undefined
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
 * How {@link AggregateBusConsumer.stop} ends: `'drain'` handles every message
 * already read, then releases; `'handover'` lets only the running handlers
 * finish and leaves the rest, still pending in Redis, to the next owners.
 * Past `deadline` ms, running handlers' signals abort and the partitions are
 * released anyway.
 *
 * @example
 * ```ts
 * await consumer.stop({ mode: 'handover', deadline: 5_000 })
 * ```
 */
export interface StopOptions {
  /** Default `'drain'`. */
  mode?: 'drain' | 'handover'
  /** ms; default 30 000. */
  deadline?: number
}

/**
 * What a stop did.
 *
 * @example
 * ```ts
 * const report: StopReport = await consumer.stop()
 * if (report.abandoned > 0) log.warn(`${report.abandoned} handlers outlived the deadline`)
 * ```
 */
export interface StopReport {
  readonly mode: 'drain' | 'handover'
  /** Partitions given back to the other consumers. */
  readonly released: number
  /** Handlers still running when the deadline passed (their signal aborted; their acks will be refused). */
  readonly abandoned: number
  /** Messages this consumer handled and acknowledged in its life. */
  readonly handled: number
}

/**
 * One owned partition in {@link ConsumerStats}.
 *
 * @example
 * ```ts
 * for (const p of stats.partitions) console.log(p.partition, p.lag, p.inFlight, p.oldestPendingAgeMs)
 * ```
 */
export interface PartitionStats {
  readonly partition: number
  readonly fence: number
  /** Entries in the partition not yet handled (acknowledged), in flight included. */
  readonly lag: number
  /** Messages read by this consumer and not yet settled. */
  readonly inFlight: number
  /** Age of the oldest unhandled entry, by the server's clock; 0 when none. */
  readonly oldestPendingAgeMs: number
}

/**
 * A snapshot of one consumer.
 *
 * @example
 * ```ts
 * const s = await consumer.stats()
 * console.log(`${s.consumerId}: ${s.partitions.length}/${s.quota} partitions, ${s.live} live, lag ${s.lag}`)
 * ```
 */
export interface ConsumerStats {
  readonly consumerId: string
  readonly aggregate: string
  /** Live consumers of the aggregate, as of the last renewal. */
  readonly live: number
  /** ⌈partitions / live⌉: the most partitions one consumer owns once stable. */
  readonly quota: number
  readonly partitions: readonly PartitionStats[]
  /** The sum of the partitions' lag. */
  readonly lag: number
  /** The sum of the partitions' in-flight counts. */
  readonly inFlight: number
  /** Messages handled and acknowledged in this consumer's life. */
  readonly handled: number
  /** Handler attempts that threw and were tried again. */
  readonly retried: number
  readonly deadLettered: number
  /** Acknowledgements the server refused because the partition had a new owner. */
  readonly acksRefused: number
  /** Partitions lost (lease ended before renewal) in this consumer's life. */
  readonly leasesLost: number
}

/**
 * One consumer of one aggregate, in one process.
 *
 * @example
 * ```ts
 * const consumer = bus.consume('sales.Order', handle)
 * process.on('SIGTERM', () => void consumer.stop({ mode: 'drain', deadline: 10_000 }))
 * ```
 */
export interface AggregateBusConsumer {
  /** Unique per consumer: `<host>:<pid>:<random>`. */
  readonly id: string
  readonly aggregate: string
  /** The partitions it owns now, ascending. */
  owned(): number[]
  stats(): Promise<ConsumerStats>
  /** Stops once: later calls return the first call's promise. Never rejects. */
  stop(options?: StopOptions): Promise<StopReport>
}

/**
 * One entry of a dead-letter stream (one per partition).
 *
 * @example
 * ```ts
 * for (const dead of await bus.deadLetters('sales.Order')) console.log(dead.id, dead.error.message)
 * ```
 */
export interface DeadLetter<B = unknown> {
  /** The entry id in its partition's dead-letter stream. */
  readonly deadId: string
  readonly aggregate: string
  readonly id: string
  readonly body: B
  readonly partition: number
  /** The entry id it had in its partition. */
  readonly entryId: string
  readonly attempts: number
  readonly error: { readonly name: string; readonly message: string }
  readonly consumerId: string
  readonly fence: number
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
