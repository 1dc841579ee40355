import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TransactionalDelivery } from '../src/index.js'
import { busSetup, eventually, gated } from './bus-support.js'
import { type PostgresServer, startPostgres } from './postgres.js'

let server: PostgresServer

beforeAll(async () => {
  server = await startPostgres()
})

afterAll(async () => {
  await server?.dispose()
})

/** A client in an open transaction of the application's. */
async function begin(pool: pg.Pool): Promise<pg.PoolClient> {
  const tx = await pool.connect()
  await tx.query('BEGIN')
  return tx
}

async function commit(tx: pg.PoolClient): Promise<void> {
  await tx.query('COMMIT')
  tx.release()
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('send({ client }): a message in the application transaction', () => {
  it('is rolled back with it, and visible to consumers only once it commits', async () => {
    const { bus, pool, close } = busSetup(server.url, { partitions: 2 })
    const seen: string[] = []
    const consumer = bus.consume<{ n: string }>('sales.Order', ({ body }) => {
      seen.push(body.n)
    })
    await eventually(() => consumer.owned().length === 2, 10_000, 'owns both')

    const rolledBack = await begin(pool)
    await bus.send(
      { aggregate: 'sales.Order', id: 'a', body: { n: 'rolled back' } },
      { client: rolledBack },
    )
    await rolledBack.query('ROLLBACK')
    rolledBack.release()

    const open = await begin(pool)
    const receipt = await bus.send(
      { aggregate: 'sales.Order', id: 'a', body: { n: 'committed' } },
      { client: open },
    )
    expect(receipt.entryId).toMatch(/^\d+$/)
    // Several safety-net reads (every 200 ms here) pass while it is open: nothing is seen.
    await pause(700)
    expect(seen).toEqual([])
    await commit(open)
    await eventually(() => seen.length === 1, 10_000, 'handled after the commit')
    await pause(300)
    expect(seen).toEqual(['committed'])
    await consumer.stop()
    await close()
  })

  it('two producer transactions held open and committed out of order: the id is handled in commit order', async () => {
    const { bus, pool, close } = busSetup(server.url, { partitions: 4 })
    // First sent (INSERTed) in t1, then in t2; t2 commits first.
    const t1 = await begin(pool)
    const t2 = await begin(pool)
    await bus.send({ aggregate: 'sales.Order', id: 'order-7', body: { n: 't1' } }, { client: t1 })
    await bus.send({ aggregate: 'sales.Order', id: 'order-7', body: { n: 't2' } }, { client: t2 })
    await bus.send({ aggregate: 'sales.Order', id: 'order-8', body: { n: 't1' } }, { client: t1 })
    // A plain send between the two commits: committed at once, so second.
    await commit(t2)
    await bus.send({ aggregate: 'sales.Order', id: 'order-7', body: { n: 'plain' } })
    await commit(t1)
    // Every message is committed before the consumer reads: INSERT order would put t1 first.
    const seen: string[] = []
    const consumer = bus.consume<{ n: string }>('sales.Order', ({ id, body }) => {
      seen.push(`${id}:${body.n}`)
    })
    await eventually(() => seen.length === 4, 10_000, 'all handled')
    await consumer.stop()
    expect(seen.filter((s) => s.startsWith('order-7'))).toEqual([
      'order-7:t2',
      'order-7:plain',
      'order-7:t1',
    ])
    await close()
  })

  it('commit order holds while a consumer reads concurrently: many racing transactions per id', async () => {
    const { bus, pool, close } = busSetup(server.url, { partitions: 2 }, 30)
    /** When each message's COMMIT was sent and when it returned, in this process's clock. */
    const commits = new Map<number, { from: number; to: number }>()
    const seen = new Map<string, number[]>()
    const consumer = bus.consume<{ n: number }>(
      'sales.Order',
      ({ id, body }) => {
        const list = seen.get(id) ?? []
        list.push(body.n)
        seen.set(id, list)
      },
      { parallelism: 4 },
    )
    let n = 0
    const producer = async (id: string) => {
      for (let k = 0; k < 15; k++) {
        const mine = ++n
        const tx = await begin(pool)
        await bus.send({ aggregate: 'sales.Order', id, body: { n: mine } }, { client: tx })
        // Held open a random while, so commits land in another order than the INSERTs.
        await pause(Math.floor(Math.random() * 15))
        const from = performance.now()
        await tx.query('COMMIT')
        commits.set(mine, { from, to: performance.now() })
        tx.release()
      }
    }
    // Three producers per id, eight ids: transactions of one id race each other.
    const ids = Array.from({ length: 8 }, (_, i) => `id-${i}`)
    await Promise.all(ids.flatMap((id) => [producer(id), producer(id), producer(id)]))
    await eventually(
      () => [...seen.values()].reduce((sum, list) => sum + list.length, 0) === 8 * 45,
      20_000,
      'all handled',
    )
    await consumer.stop()
    // Two commits of one id that overlapped may land either way; but a message
    // whose COMMIT returned before another's COMMIT was sent was committed
    // first, and must be handled first.
    const violations: string[] = []
    let reordered = 0
    for (const id of ids) {
      const handled = seen.get(id) ?? []
      expect(handled).toHaveLength(45)
      handled.forEach((earlier, i) => {
        for (const later of handled.slice(i + 1)) {
          const a = commits.get(earlier) as { from: number; to: number }
          const b = commits.get(later) as { from: number; to: number }
          if (b.to < a.from)
            violations.push(`${id}: ${earlier} handled before ${later}, committed after it`)
          if (later < earlier) reordered++
        }
      })
    }
    expect(violations).toEqual([])
    // The race did reorder: some message INSERTed later committed (and was handled) first.
    expect(reordered).toBeGreaterThan(0)
    await close()
  })
})

describe("consume(…, { transaction: true }): the handler's writes commit with the acknowledgement", () => {
  async function effects(pool: pg.Pool, table: string): Promise<string[]> {
    return (await pool.query(`SELECT note FROM ${table} ORDER BY n`)).rows.map((r) => r.note)
  }

  it('a handler that throws after writing: its writes roll back with the attempt; the retry writes once', async () => {
    const { bus, pool, rows, close } = busSetup(server.url, { partitions: 1 })
    const table = `effects_${Math.random().toString(36).slice(2, 8)}`
    await pool.query(`CREATE TABLE ${table} (n serial PRIMARY KEY, note text NOT NULL)`)
    await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq: 1 } })
    await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq: 2 } })
    const attempts: string[] = []
    const consumer = bus.consume<{ seq: number }>(
      'sales.Order',
      async ({ body, attempt, tx }: TransactionalDelivery<{ seq: number }>) => {
        attempts.push(`${body.seq}@${attempt}`)
        await tx.query(`INSERT INTO ${table} (note) VALUES ($1)`, [`${body.seq}@${attempt}`])
        if (body.seq === 1 && attempt === 1) throw new Error('after the write')
      },
      { transaction: true, retry: { attempts: 3, delay: 1 } },
    )
    await eventually(() => attempts.length === 3, 10_000, 'three attempts')
    await eventually(async () => (await rows('bus_message')).length === 0, 10_000, 'acknowledged')
    const stats = await consumer.stats()
    await consumer.stop()
    expect(attempts).toEqual(['1@1', '1@2', '2@1'])
    expect(await effects(pool, table)).toEqual(['1@2', '2@1'])
    expect(stats).toMatchObject({ handled: 2, retried: 1 })
    await close()
  })

  it('a handler whose partition got a new owner meanwhile: its writes roll back with the refused acknowledgement', async () => {
    const { bus, pool, schema, rows, close } = busSetup(server.url, { partitions: 1 })
    const table = `effects_${Math.random().toString(36).slice(2, 8)}`
    await pool.query(`CREATE TABLE ${table} (n serial PRIMARY KEY, note text NOT NULL)`)
    await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq: 1 } })
    const { gate, open } = gated()
    let wrote = false
    let abortedWith: unknown
    const consumer = bus.consume<{ seq: number }>(
      'sales.Order',
      async ({ tx }, signal) => {
        await tx.query(`INSERT INTO ${table} (note) VALUES ('stale')`)
        wrote = true
        signal.addEventListener('abort', () => {
          abortedWith = signal.reason
        })
        await gate
      },
      { transaction: true },
    )
    await eventually(() => wrote, 10_000, 'the handler wrote')
    // Another owner took the partition, as after this consumer's lease ran out elsewhere.
    await pool.query(
      `UPDATE "${schema}".bus_lease SET owner = 'someone-else', fence = fence + 1, expires_at = now() + interval '1 minute'`,
    )
    open()
    await eventually(async () => (await consumer.stats()).acksRefused === 1, 10_000, 'refused')
    expect((abortedWith as Error | undefined)?.name).toBe('LeaseLostError')
    expect(await effects(pool, table)).toEqual([])
    // The message is still there for the new owner.
    expect(await rows('bus_message')).toHaveLength(1)
    await consumer.stop({ deadline: 100 })
    await close()
  })

  it('refuses a handler that is not a function and a transaction option that is not a boolean', async () => {
    const { bus, close } = busSetup(server.url)
    expect(() =>
      bus.consume('sales.Order', async () => {}, { transaction: 'yes' as never }),
    ).toThrow(/transaction must be true or false, got 'yes'/)
    expect(() =>
      bus.send({ aggregate: 'sales.Order', id: 'a', body: 1 }, { client: {} as never }),
    ).toThrow(/client must be a pg PoolClient inside your open transaction/)
    await close()
  })
})
