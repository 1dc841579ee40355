import { describeBusBadInput } from '@vega/distributed-tests/bus'
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

/** A bus whose consumers may start: its own schema. */
const fresh = () =>
  createPostgresAggregateBus({ pool, schema: uniqueSchema(), partitions: 2, leaseMs: 1000 })

// The checks every engine's bus makes (the options they share, send, consume and stop).
describeBusBadInput({ title: 'createPostgresAggregateBus', storage: 'Postgres', make, fresh })

describe('createPostgresAggregateBus rejects bad options before touching Postgres', () => {
  it.each([
    [{ pool: undefined }, TypeError, /pool is missing/],
    [{ pool: {} }, TypeError, /pool must be a pg Pool/],
    [{ schema: 'Bad-Name' }, TypeError, /schema/],
  ] as [Record<string, unknown>, ErrorConstructor, RegExp][])('%o', (options, type, message) => {
    expect(make(options as Partial<PostgresAggregateBusOptions>)).toThrow(type)
    expect(make(options as Partial<PostgresAggregateBusOptions>)).toThrow(message)
  })

  it('refuses an ended pool', async () => {
    const ended = new pg.Pool({ connectionString: server.url })
    await ended.end()
    expect(make({ pool: ended })).toThrow(/pool has been ended/)
  })

  it('throws for a bad send option, synchronously', () => {
    const bus = make({})()
    const send = (options: unknown) => () =>
      bus.send({ aggregate: 'sales.Order', id: 'x', body: 1 }, options as never)
    expect(send({ clent: 1 })).toThrow(/unknown option 'clent'; did you mean 'client'\?/)
    expect(send({ client: pool })).toThrow(/client must be a pg PoolClient/)
  })

  it('throws for a bad transaction option at consume', () => {
    const bus = make({})()
    expect(() => bus.consume('sales.Order', async () => {}, { transaction: 1 as never })).toThrow(
      /transaction must be true or false/,
    )
  })
})
