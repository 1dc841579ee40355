// A silent partition between one consumer and Postgres: a proxy that stops
// forwarding without closing anything carries every connection of consumer
// A (its pool's and its LISTEN connection); consumer B and the producer talk
// to Postgres directly. Mid-run A is cut off: its calls end within their
// bound, its leases lapse, B takes its partitions over under greater fences,
// every message's effect (written through the handler's `tx`) commits once,
// in order per id; healed, A takes its share again and handles messages.

import { startBlackhole } from '@vega/blackhole'
import { toGroupKey } from '@vega/job-scheduler'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  createPostgresAggregateBus,
  LeaseLostError,
  type PostgresAggregateBus,
  PostgresUnavailableError,
  type TransactionalDelivery,
} from '../src/index.js'
import { eventually, uniqueSchema } from './bus-support.js'
import { type PostgresServer, startPostgres } from './postgres.js'

const PARTITIONS = 8
const LEASE = 1500
const TIMEOUT = 600
const WAIT = 60_000

let server: PostgresServer
const pools: pg.Pool[] = []

beforeAll(async () => {
  server = await startPostgres()
})

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end().catch(() => {})))
  await server?.dispose()
})

function poolTo(port: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    max: 10,
  })
  pool.on('error', () => {})
  pools.push(pool)
  return pool
}

describe('a silent partition between one consumer and Postgres', () => {
  it('its leases lapse and the other consumer takes its partitions over, fenced; every effect commits once, in order per id; its calls end within their bound; healed, it takes its share again', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const hole = await startBlackhole(server.port)
    try {
      const schema = uniqueSchema()
      const direct = poolTo(server.port)
      const cutOff = poolTo(hole.port)
      const options = { schema, partitions: PARTITIONS, leaseMs: LEASE, connectTimeoutMs: TIMEOUT }
      const busB = createPostgresAggregateBus({ pool: direct, ...options })
      const busA = createPostgresAggregateBus({ pool: cutOff, ...options })
      const effects = `${schema}_effects`
      await direct.query(
        `CREATE TABLE ${effects} (n bigserial PRIMARY KEY, id text NOT NULL, seq int NOT NULL, fence bigint NOT NULL, consumer text NOT NULL)`,
      )

      let heldId: string | undefined
      let heldFence = 0
      let heldSignal: AbortSignal | undefined
      let entered!: () => void
      const heldEntered = new Promise<void>((resolve) => {
        entered = resolve
      })
      let letGo!: () => void
      const gate = new Promise<void>((resolve) => {
        letGo = resolve
      })
      const handle = async (
        { id, body, fence, consumerId, tx }: TransactionalDelivery<{ seq: number }>,
        signal: AbortSignal,
      ) => {
        await tx.query(
          `INSERT INTO ${effects} (id, seq, fence, consumer) VALUES ($1, $2, $3, $4)`,
          [id, body.seq, fence, consumerId],
        )
        if (id === heldId && heldSignal === undefined) {
          // A's attempt of the held message: its write is made, its transaction open, when the cut comes.
          heldSignal = signal
          heldFence = fence
          entered()
          await gate
        }
      }
      const a = busA.consume('sales.Order', handle, { transaction: true, parallelism: 8 })
      await eventually(() => a.owned().length === PARTITIONS, WAIT, 'a owns every partition')
      const b = busB.consume('sales.Order', handle, { transaction: true, parallelism: 8 })
      await eventually(
        () =>
          a.owned().length > 0 &&
          b.owned().length > 0 &&
          a.owned().length + b.owned().length === PARTITIONS,
        WAIT,
        'a and b share the partitions',
      )

      // Three ids in every partition, so every owner has messages in every wave.
      const ids: string[] = []
      const perPartition = new Map<number, number>()
      for (let i = 0; ids.length < 3 * PARTITIONS; i++) {
        const id = `order-${i}`
        const p = toGroupKey(id, PARTITIONS)
        if ((perPartition.get(p) ?? 0) === 3) continue
        perPartition.set(p, (perPartition.get(p) ?? 0) + 1)
        ids.push(id)
      }
      let sent = 0
      const wave = async (bus: PostgresAggregateBus, from: number, to: number) => {
        for (let seq = from; seq <= to; seq++) {
          await Promise.all(
            ids.map((id) => bus.send({ aggregate: 'sales.Order', id, body: { seq } })),
          )
          sent += ids.length
        }
      }
      const count = async (where = 'true') =>
        Number(
          (await direct.query(`SELECT count(*) AS n FROM ${effects} WHERE ${where}`)).rows[0].n,
        )

      await wave(busB, 1, 3)
      await eventually(async () => (await count()) >= sent, WAIT, 'the first wave handled')
      // A message of one of a's partitions, held inside a's handler (its transaction open).
      heldId = Array.from({ length: 64 }, (_, i) => `held-${i}`).find((id) =>
        a.owned().includes(toGroupKey(id, PARTITIONS)),
      )
      expect(heldId).toBeDefined()
      await busB.send({ aggregate: 'sales.Order', id: heldId!, body: { seq: 1 } })
      await heldEntered
      // Mid-run: another wave on its way when the cut comes.
      const second = wave(busB, 4, 6)
      hole.cut()

      // a's calls end within their bound, with the documented errors.
      const statsAt = performance.now()
      await expect(a.stats()).rejects.toBeInstanceOf(PostgresUnavailableError)
      const sendAt = performance.now()
      // (To an aggregate nobody consumes: its fate is unknown, the statement may run once healed.)
      await expect(
        busA.send({ aggregate: 'sales.Probe', id: 'x', body: { seq: 1 } }),
      ).rejects.toBeInstanceOf(PostgresUnavailableError)
      const sendMs = performance.now() - sendAt
      expect(sendAt - statsAt).toBeLessThan(10 * TIMEOUT)
      expect(sendMs).toBeLessThan(10 * TIMEOUT)
      // Its leases lapse: no renewal confirmed for a lease, it starts nothing more, and the
      // held attempt's signal says why.
      await eventually(() => a.owned().length === 0, WAIT, 'a lost its leases')
      expect(heldSignal?.aborted).toBe(true)
      expect(heldSignal?.reason).toBeInstanceOf(LeaseLostError)
      letGo()

      // b takes every partition over, under fences greater than a's.
      await eventually(() => b.owned().length === PARTITIONS, WAIT, 'b owns every partition')
      await second
      await wave(busB, 7, 9)
      await eventually(async () => (await count()) >= sent + 1, WAIT, 'everything handled by b')
      const held = (
        await direct.query(`SELECT fence, consumer FROM ${effects} WHERE id = $1`, [heldId])
      ).rows
      // a's write of the held message rolled back with its transaction; b's committed, once.
      expect(held).toHaveLength(1)
      expect(held[0].consumer).toBe(b.id)
      expect(Number(held[0].fence)).toBeGreaterThan(heldFence)

      // Healed: a rejoins, takes its share back and handles messages again.
      hole.restore()
      await eventually(() => a.owned().length > 0, WAIT, 'a owns partitions again')
      const handledByA = await count(`consumer = '${a.id}'`)
      await wave(busB, 10, 12)
      await eventually(async () => (await count()) >= sent + 1, WAIT, 'the last wave handled')
      expect(await count(`consumer = '${a.id}'`)).toBeGreaterThan(handledByA)
      await Promise.all([a.stop(), b.stop()])

      // Once each, in order per id: an id's next message starts only once the previous one's
      // transaction committed, so the effects' numbers follow the sends.
      const { rows } = await direct.query(`SELECT id, seq FROM ${effects} ORDER BY n`)
      for (const id of ids) {
        expect(rows.filter((row) => row.id === id).map((row) => row.seq)).toEqual(
          Array.from({ length: 12 }, (_, i) => i + 1),
        )
      }
      expect(rows).toHaveLength(sent + 1)
      expect(await busB.deadLetters('sales.Order')).toEqual([])
      const left = await direct.query(
        `SELECT count(*)::int AS n FROM "${schema}".bus_message WHERE aggregate = 'sales.Order'`,
      )
      expect(left.rows[0].n).toBe(0)
      const warned = warn.mock.calls.map(([message]) => String(message)).join('\n')
      expect(warned).toMatch(/PostgresUnavailableError: @vega\/job-postgres bus tick/)
    } finally {
      warn.mockRestore()
      hole.restore()
      await hole.close()
    }
  }, 180_000)
})
