import { ownershipFact } from '@vega/distributed-tests/bus'
import { toGroupKey } from '@vega/job-scheduler'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrate, PostgresUnavailableError } from '../src/index.js'
import { type BusSetup, busSetup, eventually, recorder } from './bus-support.js'
import { type PostgresServer, startPostgres } from './postgres.js'

let server: PostgresServer

beforeAll(async () => {
  server = await startPostgres()
})

afterAll(async () => {
  await server?.dispose()
})

describe('the bus and its leases', () => {
  it('every handler runs under its own consumer’s lease of the id’s partition, while consumers join and leave', async () => {
    await ownershipFact<BusSetup>({
      setup: (options) => busSetup(server.url, options),
      partitionOf: toGroupKey,
      async leaseViolation({ pool, schema }, aggregate, delivery) {
        const { rows } = await pool.query(
          `SELECT owner, fence, expires_at > now() AS live FROM "${schema}".bus_lease WHERE aggregate = $1 AND partition = $2`,
          [aggregate, delivery.partition],
        )
        const lease = rows[0]
        if (
          lease?.owner === delivery.consumerId &&
          Number(lease?.fence) === delivery.fence &&
          lease?.live === true
        ) {
          return undefined
        }
        return `${delivery.consumerId} handled ${delivery.id} of partition ${delivery.partition} under fence ${delivery.fence}, but its lease is ${JSON.stringify(lease)}`
      },
    })
  })
})

describe('the bus when its connections fail', () => {
  it('its LISTEN connection terminated (pg_terminate_backend): re-opened, and sends wake the consumer again', async () => {
    const { bus, pool, close } = busSetup(server.url, { partitions: 1, leaseMs: 9000 })
    const rec = recorder()
    const consumer = bus.consume('sales.Order', rec.handle)
    await eventually(() => consumer.owned().length === 1, 10_000, 'owned')
    const listeners = async () =>
      (
        await pool.query(
          "SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND pid <> pg_backend_pid()",
        )
      ).rows.map((row) => row.pid as number)
    await eventually(async () => (await listeners()).length === 1, 10_000, 'listening')
    const [first] = await listeners()
    await pool.query('SELECT pg_terminate_backend($1)', [first])
    await eventually(
      async () => {
        const now = await listeners()
        return now.length === 1 && now[0] !== first
      },
      10_000,
      'listening again on a new connection',
    )
    // The safety net reads every second here: five sends each handled well under it show the wake-ups are back.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const latencies: number[] = []
    for (let seq = 1; seq <= 5; seq++) {
      const sentAt = performance.now()
      await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq } })
      await eventually(() => rec.handled.length === seq, 5000, `seq ${seq}`)
      latencies.push(performance.now() - sentAt)
    }
    expect(latencies.filter((ms) => ms < 400).length).toBeGreaterThanOrEqual(4)
    await consumer.stop()
    await close()
  })

  it('a pool the application exhausted: send fails with PostgresUnavailableError within connectTimeoutMs', async () => {
    const { bus, pool, schema, close } = busSetup(
      server.url,
      { partitions: 1, connectTimeoutMs: 300 },
      2,
    )
    // Migrated first: the schema's DDL is not what this bound is about.
    await migrate(pool, { schema })
    await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq: 1 } })
    const held = [await pool.connect(), await pool.connect()]
    const startedAt = performance.now()
    const failed = await bus
      .send({ aggregate: 'sales.Order', id: 'a', body: { seq: 2 } })
      .catch((error) => error)
    expect(failed).toBeInstanceOf(PostgresUnavailableError)
    expect(String(failed)).toMatch(/did not answer within connectTimeoutMs \(300 ms\)/)
    expect(performance.now() - startedAt).toBeLessThan(5000)
    for (const client of held) client.release()
    await close()
  })
})
