import type { Codec } from '@vega/job-distributed'
import type { Pool, PoolClient } from 'pg'

/**
 * Options of {@link createPostgresAggregateBus}.
 *
 * @example
 * ```ts
 * const options: PostgresAggregateBusOptions = { pool: new Pool(), partitions: 64, leaseMs: 10_000 }
 * ```
 */
export interface PostgresAggregateBusOptions {
  /**
   * The application's `pg` Pool. The bus never ends it. It runs each step
   * as one statement on it, and a transactional consumer holds one of its
   * connections per handler running; a bus with consumers opens one more
   * connection of its own (the pool's class and options) for LISTEN.
   */
  pool: Pool
  /** The schema of the package's tables (default `'vega_job'`): lowercase letters, digits and `_`, as `migrate` made it. */
  schema?: string
  /**
   * Partitions per aggregate (an integer 1 … 16 384). An id lives in partition
   * `toGroupKey(id, partitions)`, as in a JVM Wow service; every producer and
   * consumer must use the same number.
   */
  partitions: number
  /** How long a partition's lease holds without renewal, in ms (integer ≥ 30). Consumers renew every leaseMs / 3. */
  leaseMs: number
  /** How bodies travel; strict JSON by default. */
  codec?: Codec
  /** A step that Postgres does not answer within this many ms fails with `PostgresUnavailableError`; default min(leaseMs, 5000). */
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
  /** The aggregate id: it chooses the partition, and messages of one id are handled in commit order. */
  readonly id: string
  readonly body: B
}

/**
 * Options of {@link PostgresAggregateBus.send}.
 *
 * @example
 * ```ts
 * const tx = await pool.connect()
 * await tx.query('BEGIN')
 * await tx.query('UPDATE orders SET paid = true WHERE id = $1', ['order-7'])
 * await bus.send({ aggregate: 'sales.Order', id: 'order-7', body: { type: 'paid' } }, { client: tx })
 * await tx.query('COMMIT') // the message exists from here on, or not at all
 * tx.release()
 * ```
 */
export interface SendOptions {
  /**
   * A client inside the application's open transaction: the message is a
   * row of that transaction, rolled back with it and visible to consumers
   * only once it commits; its place in the id's order is its commit.
   */
  client?: PoolClient | undefined
}

/**
 * Where {@link PostgresAggregateBus.send} put a message.
 *
 * @example
 * ```ts
 * const { partition, entryId } = await bus.send({ aggregate: 'sales.Order', id: 'order-7', body })
 * ```
 */
export interface SendReceipt {
  readonly partition: number
  /** The message's id in the bus (a bigint as a decimal string), the delivery's `entryId`. */
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
  /** The message's id, as the send's receipt gave it. */
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
 * A delivery to a consumer started with `{ transaction: true }`: `tx` is a
 * client inside a transaction that also acknowledges the message. Write
 * through it, and the writes commit with the acknowledgement, or roll back
 * with it; never COMMIT or ROLLBACK it yourself, nor keep it past the handler.
 *
 * @example
 * ```ts
 * const handle: TransactionalHandler<{ amount: number }> = async ({ id, body, tx }) => {
 *   await tx.query('UPDATE accounts SET balance = balance + $1 WHERE id = $2', [body.amount, id])
 * }
 * ```
 */
export interface TransactionalDelivery<B = unknown> extends Delivery<B> {
  readonly tx: PoolClient
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
 * Handles one message inside the transaction that acknowledges it.
 *
 * @example
 * ```ts
 * const handle: TransactionalHandler = async ({ id, tx }) => {
 *   await tx.query('INSERT INTO seen (id) VALUES ($1)', [id])
 * }
 * ```
 */
export type TransactionalHandler<B = unknown> = (
  delivery: TransactionalDelivery<B>,
  signal: AbortSignal,
) => unknown

/**
 * How often a handler that throws is tried before its message goes to the
 * dead letters (the shape of `@vega/job-core`'s `RetryPolicy`).
 *
 * @example
 * ```ts
 * const retry: BusRetryPolicy = { attempts: 5, delay: (n) => 50 * n, retryIf: (e) => !(e instanceof TypeError) }
 * ```
 */
export interface BusRetryPolicy {
  /** Total attempts, the first included; an integer ≥ 1. */
  attempts: number
  /**
   * ms before the next attempt: a number, or a function of the failed
   * attempt (1-based) and its error. Default: exponential with full jitter,
   * up to 100, 200, 400 … ms, capped at 30 s. A function that returns a
   * negative, `NaN` or infinite delay sends the message to the dead letters
   * with a `RangeError` (as `@vega/job-core` fails the task).
   */
  delay?: number | ((attempt: number, error: unknown) => number) | undefined
  /** Whether the error is worth another attempt; default every error. */
  retryIf?: ((error: unknown, attempt: number) => boolean) | undefined
}

/**
 * Options of {@link PostgresAggregateBus.consume}.
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
  /** `true`: every attempt runs in its own transaction, handed to the handler as `delivery.tx`, that also acknowledges the message. */
  transaction?: boolean
}

/**
 * How {@link AggregateBusConsumer.stop} ends: `'drain'` handles every message
 * already read, then releases; `'handover'` lets only the running handlers
 * finish and leaves the rest to the next owners. Past `deadline` ms, running
 * handlers' signals abort and the partitions are released anyway.
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
  /** Messages committed to the partition and not yet handled (acknowledged), in flight included. */
  readonly lag: number
  /** Messages read by this consumer and not yet settled. */
  readonly inFlight: number
  /** Age of the oldest unhandled message, by the server's clock; 0 when none. */
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
  /** Acknowledgements the database refused because the partition had a new owner (or its lease ran out). */
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
 * One dead letter: a message whose handler kept failing.
 *
 * @example
 * ```ts
 * for (const dead of await bus.deadLetters('sales.Order')) console.log(dead.id, dead.error.message)
 * ```
 */
export interface DeadLetter<B = unknown> {
  /** Its id among the dead letters (a bigint as a decimal string). */
  readonly deadId: string
  readonly aggregate: string
  readonly id: string
  readonly body: B
  readonly partition: number
  /** The message's id while it was in the bus. */
  readonly entryId: string
  readonly attempts: number
  readonly error: { readonly name: string; readonly message: string }
  readonly consumerId: string
  readonly fence: number
}

/**
 * What {@link createPostgresAggregateBus} returns.
 *
 * @example
 * ```ts
 * const bus: PostgresAggregateBus = createPostgresAggregateBus({ pool, partitions: 64, leaseMs: 10_000 })
 * ```
 */
export interface PostgresAggregateBus {
  /** What it runs on, as OpenTelemetry's `messaging.system` names it (`@vega/job-otel` reads it). */
  readonly system: 'postgresql'
  readonly partitions: number
  /**
   * Adds a message to the id's partition (inside the caller's transaction
   * with `{ client }`). Throws `TypeError` at once for a bad message;
   * rejects with `PostgresUnavailableError` when Postgres does not answer.
   */
  send<B>(message: BusMessage<B>, options?: SendOptions): Promise<SendReceipt>
  /** Starts a consumer of `aggregate` in this process; it joins the others and takes its share of partitions. */
  consume<B = unknown>(
    aggregate: string,
    handler: TransactionalHandler<B>,
    options: ConsumeOptions & { transaction: true },
  ): AggregateBusConsumer
  consume<B = unknown>(
    aggregate: string,
    handler: DeliveryHandler<B>,
    options?: ConsumeOptions & { transaction?: false | undefined },
  ): AggregateBusConsumer
  /** The oldest `count` (default 100) dead letters of the aggregate. */
  deadLetters<B = unknown>(aggregate: string, count?: number): Promise<DeadLetter<B>[]>
}
