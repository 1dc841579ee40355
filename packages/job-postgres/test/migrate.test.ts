import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { migrate, SCHEMA_VERSION } from '../src/index.js'
import { freshSchema, poolOf, rows, usePostgres } from './support.js'

const pg = usePostgres()
const CHILD = fileURLToPath(new URL('./children/migrate.mjs', import.meta.url))

/** Runs migrate in a forked process; resolves with its report once every child got the go. */
function migrateIn(url: string, schema: string, go: Promise<void>): Promise<unknown> {
  const child = fork(CHILD, [url, schema], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  return new Promise((resolve, reject) => {
    child.once('message', (message: { t: string }) => {
      if (message.t !== 'ready') return
      void go.then(() => child.send('go'))
      child.once('message', (report: { t: string; error?: string }) => {
        if (report.t === 'error') reject(new Error(report.error))
        else resolve(report)
      })
    })
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`migrate child exited ${code}`))
    })
  })
}

describe('migrate(pool)', () => {
  it('creates the schema once when 8 processes start at once: one migrates, seven find it done, and every table and index is there', async () => {
    const schema = freshSchema()
    let go!: () => void
    const started = new Promise<void>((resolve) => {
      go = resolve
    })
    const reports = Array.from({ length: 8 }, () => migrateIn(pg.url, schema, started))
    // Every child connected and waits: they all run migrate in the same moment.
    await new Promise((resolve) => setTimeout(resolve, 200))
    go()
    const done = (await Promise.all(reports)) as { from: number; to: number }[]
    expect(done.every((report) => report.to === SCHEMA_VERSION)).toBe(true)
    expect(
      done.filter((report) => report.from === 0 && report.to === SCHEMA_VERSION).length,
    ).toBeGreaterThanOrEqual(1)
    const pool = poolOf(pg.url)
    const versions = await rows(
      pool,
      `SELECT version, name FROM "${schema}".migrations ORDER BY version`,
    )
    expect(versions).toEqual([
      { version: 1, name: 'coordination' },
      { version: 2, name: 'aggregate bus' },
    ])
    const tables = await rows<{ tablename: string }>(
      pool,
      'SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename',
      [schema],
    )
    expect(tables.map((t) => t.tablename)).toEqual([
      'bus_dead_letter',
      'bus_lease',
      'bus_member',
      'bus_message',
      'bus_order',
      'fences',
      'holders',
      'instance',
      'migrations',
      'results',
      'waiters',
    ])
    const indexes = await rows<{ indexname: string }>(
      pool,
      'SELECT indexname FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname',
      [schema],
    )
    expect(indexes.map((i) => i.indexname)).toEqual([
      'bus_dead_letter_aggregate',
      'bus_dead_letter_pkey',
      'bus_lease_pkey',
      'bus_member_pkey',
      'bus_message_order',
      'bus_message_unstamped',
      'bus_order_pkey',
      'fences_pkey',
      'holders_expires_at',
      'holders_pkey',
      'instance_pkey',
      'migrations_pkey',
      'results_expires_at',
      'results_pkey',
      'waiters_expires_at',
      'waiters_line',
      'waiters_pkey',
    ])
    expect(await rows(pool, `SELECT count(*)::int AS n FROM "${schema}".instance`)).toEqual([
      { n: 1 },
    ])
  })

  it('is never destructive: a second run changes nothing and keeps the rows', async () => {
    const schema = freshSchema()
    const pool = poolOf(pg.url)
    expect(await migrate(pool, { schema })).toEqual({ from: 0, to: SCHEMA_VERSION })
    await pool.query(`INSERT INTO "${schema}".fences (key, fence) VALUES ('k', 41)`)
    const [instance] = await rows(pool, `SELECT id FROM "${schema}".instance`)
    expect(await migrate(pool, { schema })).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION })
    expect(await rows(pool, `SELECT fence::int FROM "${schema}".fences`)).toEqual([{ fence: 41 }])
    expect(await rows(pool, `SELECT id FROM "${schema}".instance`)).toEqual([instance])
  })

  it('leaves a schema a newer release migrated as it is', async () => {
    const schema = freshSchema()
    const pool = poolOf(pg.url)
    await migrate(pool, { schema })
    await pool.query(
      `INSERT INTO "${schema}".migrations (version, name) VALUES (99, 'from the future')`,
    )
    expect(await migrate(pool, { schema })).toEqual({ from: 99, to: 99 })
  })

  it('refuses a schema name that is not a plain identifier, naming it', async () => {
    const pool = poolOf(pg.url)
    await expect(migrate(pool, { schema: 'Robert"; DROP' })).rejects.toThrow(
      /migrate\(pool, \{ schema \}\): schema must be a lower-case identifier .* got 'Robert"; DROP'/,
    )
  })
})
