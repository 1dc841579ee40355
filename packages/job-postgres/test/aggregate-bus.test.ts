import { describeBusFacts } from '@vega/distributed-tests/bus'
import { toGroupKey } from '@vega/job-scheduler'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BusSetup, busSetup, eventually, recorder, sendAll } from './bus-support.js'
import { type PostgresServer, startPostgres } from './postgres.js'

let server: PostgresServer

beforeAll(async () => {
  server = await startPostgres()
})

afterAll(async () => {
  await server?.dispose()
})

// The bus's facts, written once for every engine; what only Postgres can tell is said here.
describeBusFacts<BusSetup>({
  title: 'createPostgresAggregateBus',
  setup: (options) => busSetup(server.url, options),
  handoverWithinMs: 4000,
  churn: { perId: 30, step: 100 },
  async storedAsSent({ rows }, receipt) {
    expect(toGroupKey('order-1', 128)).toBe(receipt.partition)
    expect(receipt.entryId).toMatch(/^\d+$/)
    expect(await rows('bus_message')).toMatchObject([
      {
        aggregate: 'sales.Order',
        partition: receipt.partition,
        id: 'order-1',
        body: '{"seq":1}',
        pos: receipt.entryId,
      },
    ])
  },
  async sendUndecodable({ bus, pool, schema }, aggregate, id) {
    // Written by hand over a sent row, as a foreign producer might.
    await bus.send({ aggregate, id, body: { seq: 1 } })
    await pool.query(`UPDATE "${schema}".bus_message SET body = '{not json' WHERE id = $1`, [id])
  },
  async takePartition({ pool, schema }, aggregate, partition) {
    await pool.query(
      `UPDATE "${schema}".bus_lease SET owner = 'someone-else', fence = fence + 1, expires_at = now() + interval '1 minute' WHERE aggregate = $1 AND partition = $2`,
      [aggregate, partition],
    )
  },
  kept: async ({ rows }) => (await rows('bus_message')).length,
  async nothingHeld({ rows }) {
    expect(await rows('bus_lease', 'owner IS NOT NULL')).toEqual([])
    expect(await rows('bus_member')).toEqual([])
  },
  async onlyFencesLeft({ rows }, _aggregate, partitions) {
    // Handled rows are deleted; no member or lease owner is left.
    expect(await rows('bus_message')).toEqual([])
    expect(await rows('bus_member')).toEqual([])
    const leases = await rows('bus_lease')
    expect(leases).toHaveLength(partitions)
    expect(leases.every((l) => l.owner === null && Number(l.fence) > 0)).toBe(true)
  },
})

describe('createPostgresAggregateBus, wake-ups', () => {
  it('wakes on a send (NOTIFY), not on its safety-net read: a long lease, a message handled well before it', async () => {
    // blockMs is min(1000, leaseMs / 3): with a 9 s lease the safety net reads every second.
    const { bus, close } = busSetup(server.url, { partitions: 2, leaseMs: 9000 })
    const rec = recorder()
    const consumer = bus.consume('sales.Order', rec.handle)
    await eventually(() => consumer.owned().length === 2, 10_000, 'owns both')
    // Let the first reads pass, then time sends that only a wake-up delivers fast.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const latencies: number[] = []
    for (let seq = 1; seq <= 5; seq++) {
      const sentAt = performance.now()
      await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq } })
      await eventually(() => rec.handled.length === seq, 5000, `seq ${seq}`)
      latencies.push(performance.now() - sentAt)
    }
    await consumer.stop()
    // Without the NOTIFY each would wait for the next sweep: up to 1000 ms, 500 on average.
    expect(latencies.filter((ms) => ms < 400).length).toBeGreaterThanOrEqual(4)
    await close()
  })
})

describe('createPostgresAggregateBus, no fault', () => {
  it('under load, its own statements never fail each other: no lease lost, nothing handled twice', async () => {
    // Reads, acknowledgements, renewals and grants of one consumer run at once over 64 partitions;
    // statements that locked lease rows in different orders once deadlocked here.
    const { bus, close } = busSetup(server.url, { partitions: 64, leaseMs: 1500 })
    const warnings: unknown[] = []
    const warn = console.warn
    console.warn = (...args: unknown[]) => {
      warnings.push(args.join(' '))
    }
    try {
      const ids = Array.from({ length: 400 }, (_, i) => `order-${i}`)
      const rec = recorder()
      const consumers = [
        bus.consume('sales.Order', rec.handle, { parallelism: 32 }),
        bus.consume('sales.Order', rec.handle, { parallelism: 32 }),
      ]
      await sendAll(bus, 'sales.Order', ids, 15)
      await eventually(() => rec.handled.length >= 6000, 60_000, 'all handled')
      const stats = await Promise.all(consumers.map((c) => c.stats()))
      await Promise.all(consumers.map((c) => c.stop()))
      expect(warnings).toEqual([])
      expect(stats.map((s) => s.leasesLost)).toEqual([0, 0])
      expect(rec.handled).toHaveLength(6000)
      expect(rec.overlaps).toEqual([])
    } finally {
      console.warn = warn
    }
    await close()
  }, 90_000)
})
