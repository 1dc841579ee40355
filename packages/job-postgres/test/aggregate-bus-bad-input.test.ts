import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresAggregateBus, type PostgresAggregateBusOptions } from '../src/index.js'
import { uniqueSchema } from './bus-support.js'
import { type PostgresServer, startPostgres } from './postgres.js'

let server: PostgresServer
let pool: pg.Pool

beforeAll(async () => {
  server = await startPostgres()
  pool = new pg.Pool({ connectionString: server.url, max: 4 })
  // A connection the server ends at dispose is the pool's to drop, never a crash of the test.
  pool.on('error', () => {})
})

afterAll(async () => {
  await pool?.end()
  await server?.dispose()
})

const make = (options: Partial<PostgresAggregateBusOptions>) => () =>
  createPostgresAggregateBus({
    pool,
    schema: 'bad_input',
    partitions: 8,
    leaseMs: 1000,
    ...options,
  } as PostgresAggregateBusOptions)

describe('createPostgresAggregateBus rejects bad options before touching Postgres', () => {
  it.each([
    [{ pool: undefined }, TypeError, /pool is missing/],
    [{ pool: {} }, TypeError, /pool must be a pg Pool/],
    [{ schema: 'Bad-Name' }, TypeError, /schema/],
    [{ partitions: undefined }, TypeError, /partitions is missing/],
    [{ partitions: 0 }, RangeError, /partitions must be an integer from 1 to 16384, got 0/],
    [{ partitions: 2.5 }, RangeError, /partitions must be an integer/],
    [{ leaseMs: 5 }, RangeError, /leaseMs \(ms\) must be an integer from 30/],
    [{ leaseMs: undefined }, TypeError, /leaseMs is missing/],
    [{ connectTimeoutMs: 0 }, RangeError, /connectTimeoutMs/],
    [{ codec: { encode: 1 } }, TypeError, /codec must be/],
    [{ partitons: 8 }, TypeError, /unknown option 'partitons'; did you mean 'partitions'\?/],
  ] as [Record<string, unknown>, ErrorConstructor, RegExp][])('%o', (options, type, message) => {
    expect(make(options as Partial<PostgresAggregateBusOptions>)).toThrow(type)
    expect(make(options as Partial<PostgresAggregateBusOptions>)).toThrow(message)
  })

  it('refuses an ended pool', async () => {
    const ended = new pg.Pool({ connectionString: server.url })
    await ended.end()
    expect(make({ pool: ended })).toThrow(/pool has been ended/)
  })

  it('throws for a bad message or send option at send, synchronously', () => {
    const bus = make({})()
    const send = (message: unknown, options?: unknown) => () =>
      bus.send(message as never, options as never)
    expect(send(null)).toThrow(/message must be an object/)
    expect(send({ aggregate: 'Order', id: 'x', body: 1 })).toThrow(/"context.Aggregate"/)
    expect(send({ aggregate: 'sales.Order', id: '', body: 1 })).toThrow(
      /id must be a non-empty string/,
    )
    expect(send({ aggregate: 'sales.Order', id: 7, body: 1 })).toThrow(TypeError)
    expect(send({ aggregate: 'sales.Order', id: 'x', body: () => 1 })).toThrow(/cannot be encoded/)
    expect(send({ aggregate: 'sales.Order', id: 'x', body: 1 }, { clent: 1 })).toThrow(
      /unknown option 'clent'; did you mean 'client'\?/,
    )
    expect(send({ aggregate: 'sales.Order', id: 'x', body: 1 }, { client: pool })).toThrow(
      /client must be a pg PoolClient/,
    )
  })

  it('throws for bad consume and stop arguments', async () => {
    const bus = createPostgresAggregateBus({
      pool,
      schema: uniqueSchema(),
      partitions: 2,
      leaseMs: 1000,
    })
    expect(() => bus.consume('sales', async () => {})).toThrow(/"context.Aggregate"/)
    expect(() => bus.consume('sales.Order', 'nope' as never)).toThrow(/handler must be a function/)
    expect(() => bus.consume('sales.Order', async () => {}, { parallelism: 0 })).toThrow(RangeError)
    expect(() => bus.consume('sales.Order', async () => {}, { retry: 0 })).toThrow(
      /retry must be an integer/,
    )
    expect(() =>
      bus.consume('sales.Order', async () => {}, { retry: { attempts: 2, delay: -1 } }),
    ).toThrow(/retry.delay/)
    expect(() => bus.consume('sales.Order', async () => {}, { retry: 'x' as never })).toThrow(
      /retry must be a number of attempts/,
    )
    expect(() => bus.consume('sales.Order', async () => {}, { transaction: 1 as never })).toThrow(
      /transaction must be true or false/,
    )
    expect(() => bus.consume('sales.Order', async () => {}, { parallel: 2 } as never)).toThrow(
      /unknown option 'parallel'/,
    )
    const consumer = bus.consume('sales.Order', async () => {})
    expect(() => consumer.stop({ deadLine: 10 } as never)).toThrow(
      /consumer.stop\(options\): unknown option 'deadLine'; did you mean 'deadline'\?/,
    )
    expect(() => consumer.stop({ mode: 'now' as never })).toThrow(/'drain' or 'handover'/)
    expect(() => consumer.stop({ deadline: -1 })).toThrow(RangeError)
    await consumer.stop()
    await expect(bus.deadLetters('sales.Order', 0)).rejects.toThrow(/count must be an integer/)
  })
})
