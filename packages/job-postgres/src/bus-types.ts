import type {
  AggregateBusConsumer,
  BusMessage,
  BusRetryPolicy,
  Codec,
  DeadLetter,
  Delivery,
  DeliveryHandler,
  SendReceipt,
} from '@vega/job-distributed'
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
   * connections per handler running; a bus with consumers listens on the
   * pool's one LISTEN connection (the pool's class and options, outside
   * it), shared with every coordination and bus made with the same pool.
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
  /**
   * A step that Postgres does not answer within this many ms fails with
   * `PostgresUnavailableError`; on the server, every lock wait of the
   * bus's statements is given up after as long (`lock_timeout`). Default
   * min(leaseMs, 5000).
   */
  connectTimeoutMs?: number
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
