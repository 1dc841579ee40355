// The bus's statements bounded on the server: a statement that waits on a
// row lock someone else holds (here the test, in an open transaction) is
// cancelled by Postgres itself after connectTimeoutMs (lock_timeout, set by
// the statement's function), while the caller hears PostgresUnavailableError
// within the same bound on its side.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { migrate, PostgresUnavailableError } from '../src/index.js'
import { busSetup, eventually, recorder } from './bus-support.js'
import { type PostgresServer, startPostgres } from './postgres.js'

const BOUND = 300
const WAIT = 20_000

let server: PostgresServer

beforeAll(async () => {
  server = await startPostgres()
})

afterAll(async () => {
  await server?.dispose()
})

/** The bus's statements of `schema` waiting on a lock now: which (backend and start) and how long they have waited (ms). */
async function waiting(
  pool: { query(text: string, values: unknown[]): Promise<{ rows: unknown[] }> },
  schema: string,
): Promise<{ which: string; ms: number }[]> {
  const { rows } = await pool.query(
    `SELECT pid || ' ' || query_start AS which,
       floor(extract(epoch from clock_timestamp() - query_start) * 1000)::int AS ms
     FROM pg_stat_activity
     WHERE wait_event_type = 'Lock' AND state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()`,
    [`%"${schema}".bus_%`],
  )
  return rows as { which: string; ms: number }[]
}

describe('the bus on a lock it cannot get', () => {
  it('a send blocked on its partition’s counter row: PostgresUnavailableError within the bound, and the server gives the statement up while the lock is still held', async () => {
    const { bus, pool, schema, close } = busSetup(server.url, {
      partitions: 1,
      connectTimeoutMs: BOUND,
    })
    try {
      // Migrated first: the schema's DDL is not what this bound is about.
      await migrate(pool, { schema })
      await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq: 1 } })
      const locker = await pool.connect()
      try {
        await locker.query('BEGIN')
        await locker.query(`SELECT * FROM "${schema}".bus_order FOR UPDATE`)
        const startedAt = performance.now()
        const failed = await bus
          .send({ aggregate: 'sales.Order', id: 'a', body: { seq: 2 } })
          .catch((error: unknown) => error)
        expect(failed).toBeInstanceOf(PostgresUnavailableError)
        expect((failed as PostgresUnavailableError).operation).toBe('send')
        expect(performance.now() - startedAt).toBeLessThan(WAIT / 4)
        // Still holding the lock: without the server's bound the send would wait on it for good.
        await eventually(
          async () => (await waiting(pool, schema)).length === 0,
          WAIT,
          'the blocked send given up by the server',
        )
      } finally {
        await locker.query('ROLLBACK')
        locker.release()
      }
      // Nothing was left half-done: the failed send never happened, the next one does.
      await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq: 3 } })
      const { rows } = await pool.query(`SELECT body FROM "${schema}".bus_message ORDER BY seq`)
      expect(rows.map((row) => JSON.parse(row.body).seq)).toEqual([1, 3])
    } finally {
      await close()
    }
  })

  it('a consumer whose lease row is locked: its steps are given up by the server within the bound, one after another, and it goes on once the lock is gone', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const { bus, pool, schema, close } = busSetup(server.url, {
      partitions: 1,
      leaseMs: 3000,
      connectTimeoutMs: BOUND,
    })
    try {
      await migrate(pool, { schema })
      const rec = recorder()
      const consumer = bus.consume('sales.Order', rec.handle)
      await eventually(() => consumer.owned().length === 1, WAIT, 'owned')
      const locker = await pool.connect()
      const seen = new Set<string>()
      let longest = 0
      // Held 20 bounds: without the server's bound, the first step to wait would wait all along.
      const HOLD = 20 * BOUND
      try {
        await locker.query('BEGIN')
        await locker.query(`SELECT * FROM "${schema}".bus_lease FOR UPDATE`)
        // Its renewal (and its reads, once a message is sent) lock that row: each waits, and
        // each wait is ended by the server.
        await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq: 1 } })
        const until = performance.now() + HOLD
        while (performance.now() < until) {
          for (const { which, ms } of await waiting(pool, schema)) {
            seen.add(which)
            longest = Math.max(longest, ms)
          }
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
      } finally {
        await locker.query('ROLLBACK')
        locker.release()
      }
      // Its steps did wait on the lock, several of them, none for half the hold.
      expect(seen.size).toBeGreaterThanOrEqual(2)
      expect(longest).toBeLessThan(HOLD / 2)
      const warned = warn.mock.calls.map(([message]) => String(message)).join('\n')
      expect(warned).toMatch(/PostgresUnavailableError/)
      await eventually(() => rec.handled.length === 1, WAIT, 'handled once the lock is gone')
      await consumer.stop()
    } finally {
      warn.mockRestore()
      await close()
    }
  })
})
