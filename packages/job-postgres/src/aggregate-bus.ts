import { assertKnownKeys } from '@vega/job-core'
import {
  type AggregateBusConsumer,
  type BusMessage,
  checkBusAggregate,
  checkBusInteger,
  checkBusMessage,
  createBusConsumer,
  type DeadLetter,
  type DeliveryHandler,
  describeBusValue,
  prepareBusConsumer,
  resolveBusOptions,
  type SendReceipt,
} from '@vega/job-distributed'
import { toGroupKey } from '@vega/job-scheduler'
import type { Pool, PoolClient } from 'pg'
import type {
  ConsumeOptions,
  PostgresAggregateBus,
  PostgresAggregateBusOptions,
  SendOptions,
} from './bus-types.js'
import { isPostgresUnavailableError } from './errors.js'
import { PostgresBusEngine } from './internal/bus/engine.js'
import { BusListener } from './internal/bus/listener.js'
import { PostgresBusStore } from './internal/bus/store.js'
import { channelOf, checkSchema, migrate } from './schema.js'

function checkPool(pool: unknown): Pool {
  const where = 'createPostgresAggregateBus(options)'
  if (pool === undefined || pool === null) {
    throw new TypeError(
      `${where}: pool is missing; pass a pg Pool: { pool: new Pool({ connectionString }), … }.`,
    )
  }
  const candidate = pool as { query?: unknown; connect?: unknown; Client?: unknown }
  if (
    typeof candidate.query !== 'function' ||
    typeof candidate.connect !== 'function' ||
    typeof candidate.Client !== 'function'
  ) {
    throw new TypeError(
      `${where}: pool must be a pg Pool (new Pool(config) from 'pg'), got ${describeBusValue(pool)}.`,
    )
  }
  if ((pool as { ending?: unknown }).ending === true) {
    throw new TypeError(`${where}: pool has been ended (pool.end()); pass an open one.`)
  }
  return pool as Pool
}

function checkClient(where: string, client: unknown): PoolClient {
  const candidate = client as Partial<PoolClient> | null
  if (
    candidate === null ||
    typeof candidate !== 'object' ||
    typeof candidate.query !== 'function' ||
    typeof candidate.release !== 'function'
  ) {
    throw new TypeError(
      `${where}: client must be a pg PoolClient inside your open transaction (await pool.connect(), then BEGIN), got ${describeBusValue(client)}.`,
    )
  }
  return client as PoolClient
}

const BUS_OPTIONS = ['pool', 'schema', 'partitions', 'leaseMs', 'codec', 'connectTimeoutMs']
const SEND_OPTIONS = ['client']

/**
 * Per-aggregate order across processes (Wow's aggregate dispatching,
 * distributed), on Postgres. `send` adds a message to partition
 * `toGroupKey(id, partitions)` of its aggregate — the JVM-compatible key,
 * so a Kotlin Wow service agrees on where an id lives — and with
 * `{ client }` does it inside the caller's transaction: the message exists
 * only if that transaction commits, and its place in the id's order is the
 * order of commit. Every `consume` in any process joins the aggregate's
 * consumers; each partition is owned by one live consumer at a time under
 * a fenced lease, partitions spread evenly (none owns more than
 * ⌈partitions / live⌉ once stable) and move when consumers come and go.
 * Inside a consumer an owned partition feeds a local `AggregateDispatcher`:
 * one message at a time per id, in commit order.
 *
 * Delivery is at-least-once: a message is acknowledged (deleted) after its
 * handler settled, and the id's next message starts only once that is
 * confirmed; a consumer that dies leaves its unacknowledged messages to the
 * next owner, which handles them first. With `{ transaction: true }` the
 * handler gets `delivery.tx`, and its writes through it commit with the
 * acknowledgement or not at all: exactly once. A handler that keeps
 * throwing sends its message to the dead letters; the id's later messages
 * go on. The tables are created by `migrate(pool)`, run once by the bus
 * itself if the application did not. Throws `TypeError` / `RangeError` for
 * bad options, before touching Postgres.
 *
 * @example
 * ```ts
 * import { createPostgresAggregateBus } from '@vega/job-postgres'
 * import pg from 'pg'
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 * const bus = createPostgresAggregateBus({ pool, partitions: 64, leaseMs: 10_000 })
 * await bus.send({ aggregate: 'sales.Order', id: 'order-7', body: { type: 'pay' } }) // producer
 * const consumer = bus.consume('sales.Order', async ({ id, body, fence }) => apply(id, body, fence), {
 *   parallelism: 16,
 * }) // every worker process
 * process.once('SIGTERM', () => void consumer.stop({ mode: 'drain', deadline: 10_000 }))
 * ```
 */
export function createPostgresAggregateBus(
  options: PostgresAggregateBusOptions,
): PostgresAggregateBus {
  const where = 'createPostgresAggregateBus(options)'
  if (options === null || typeof options !== 'object') {
    throw new TypeError(
      `${where}: options must be an object such as { pool, partitions: 64, leaseMs: 10_000 }.`,
    )
  }
  assertKnownKeys(where, options, BUS_OPTIONS)
  const pool = checkPool(options.pool)
  const schema = checkSchema(options.schema ?? 'vega_job', where)
  const { partitions, leaseMs, codec, connectTimeoutMs } = resolveBusOptions(where, options)
  // The schema's migrations, once per bus (and never twice at once); a failure is tried again at the next step.
  let migrated: Promise<void> | undefined
  const ready = (): Promise<void> => {
    migrated ??= migrate(pool, { schema }).then(
      () => {},
      (error: unknown) => {
        migrated = undefined
        throw error
      },
    )
    return migrated
  }
  const channel = `${channelOf(schema)}:bus`
  const store = new PostgresBusStore(pool, `"${schema}"`, channel, connectTimeoutMs, ready)
  let listener: BusListener | undefined

  const send = <B>(message: BusMessage<B>, sendOptions: SendOptions = {}): Promise<SendReceipt> => {
    const at = 'bus.send(message, options)'
    const { aggregate, id, text } = checkBusMessage(at, message, codec)
    if (sendOptions === null || typeof sendOptions !== 'object') {
      throw new TypeError(`${at}: options must be an object such as { client: tx }.`)
    }
    assertKnownKeys(at, sendOptions, SEND_OPTIONS)
    const client =
      sendOptions.client === undefined ? undefined : checkClient(at, sendOptions.client)
    const partition = toGroupKey(id, partitions)
    return store
      .send(aggregate, partition, id, text, client)
      .then((entryId) => ({ partition, entryId }))
  }

  const consume = (
    aggregate: string,
    handler: unknown,
    consumeOptions: ConsumeOptions = {},
  ): AggregateBusConsumer => {
    const at = 'bus.consume(aggregate, handler, options)'
    const config = prepareBusConsumer(at, aggregate, handler, consumeOptions, {
      engine: '@vega/job-postgres',
      known: ['transaction'],
      partitions,
      leaseMs,
      connectTimeoutMs,
      codec,
      operationOf: (error) => (isPostgresUnavailableError(error) ? error.operation : undefined),
    })
    const transaction = consumeOptions.transaction ?? false
    if (typeof transaction !== 'boolean') {
      throw new TypeError(
        `${at}: transaction must be true or false, got ${describeBusValue(transaction)}.`,
      )
    }
    listener ??= new BusListener(pool, channel, connectTimeoutMs, config.onError)
    const engine = new PostgresBusEngine({
      store,
      listener,
      aggregate,
      id: config.id,
      partitions,
      leaseMs,
      connectTimeoutMs,
      parallelism: config.parallelism,
      transaction,
      report: config.onError,
    })
    return createBusConsumer(engine, config, handler as DeliveryHandler<unknown>)
  }

  const deadLetters = async <B>(aggregate: string, count = 100): Promise<DeadLetter<B>[]> => {
    const at = 'bus.deadLetters(aggregate, count)'
    checkBusAggregate(at, aggregate)
    checkBusInteger(at, 'count', count, 1, 1_000_000)
    const rows = await store.deadLetters(aggregate, count)
    return rows.map((row) => {
      let body: unknown
      try {
        body = codec.decode(row.body)
      } catch {
        body = row.body
      }
      return {
        deadId: row.deadId,
        aggregate,
        id: row.id,
        body: body as B,
        partition: row.partition,
        entryId: row.pos,
        attempts: row.attempts,
        error: { name: row.errorName, message: row.errorMessage },
        consumerId: row.consumer,
        fence: row.fence,
      }
    })
  }

  return Object.freeze({
    system: 'postgresql' as const,
    partitions,
    send,
    consume: consume as PostgresAggregateBus['consume'],
    deadLetters,
  })
}
