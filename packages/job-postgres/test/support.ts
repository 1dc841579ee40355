import { installCoordination } from '@vega/job-coordination'
import { createRuntime, type Runtime, type RuntimeEvent, subscribe } from '@vega/job-core'
import { type PostgresServer, startPostgresServer } from '@vega/postgres-server'
import pg from 'pg'
import { afterAll, beforeAll } from 'vitest'
import {
  createPostgresCoordination,
  type PostgresCoordination,
  type PostgresCoordinationOptions,
} from '../src/index.js'

/** One real Postgres for a test file: started before its tests, removed after. */
export function usePostgres(): { readonly server: PostgresServer; readonly url: string } {
  const state = {} as { server: PostgresServer; url: string }
  beforeAll(async () => {
    state.server = await startPostgresServer({
      who: "@vega/job-postgres's tests",
      folderPrefix: 'vega-job-postgres-test-',
    })
    state.url = state.server.url
  })
  afterAll(async () => {
    await state.server?.dispose()
  })
  return state
}

const pools: pg.Pool[] = []

/** A pool on the test's Postgres, ended after the file. */
export function poolOf(url: string, options: pg.PoolConfig = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 4, ...options })
  // An error on an idle client (a terminated backend) is the pool's to handle: never a crash of the test.
  pool.on('error', () => {})
  pools.push(pool)
  return pool
}

afterAll(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.end().catch(() => {})))
})

let schemas = 0

/** A schema name of its own for each test. */
export function freshSchema(): string {
  return `vj_${process.pid}_${++schemas}`
}

/** Rows of one query on a fresh pool connection. */
export async function rows<T = Record<string, unknown>>(
  pool: pg.Pool,
  text: string,
  values?: unknown[],
): Promise<T[]> {
  return (await pool.query(text, values)).rows as T[]
}

export interface Setup {
  readonly pool: pg.Pool
  readonly coordination: PostgresCoordination
  readonly runtime: Runtime
  readonly events: RuntimeEvent[]
  readonly schema: string
}

/** One "process": a pool of its own, a coordination on a fresh schema (unless given), a runtime. */
export function setup(
  url: string,
  options: Partial<PostgresCoordinationOptions> & { poolMax?: number } = {},
): Setup {
  const { poolMax, ...rest } = options
  const pool = (rest.pool as pg.Pool | undefined) ?? poolOf(url, { max: poolMax ?? 4 })
  const schema = rest.schema ?? freshSchema()
  const coordination = createPostgresCoordination({ pool, schema, leaseMs: 1500, ...rest })
  const runtime = createRuntime({ plugins: [installCoordination, coordination.plugin] })
  const events: RuntimeEvent[] = []
  subscribe(runtime, (event) => events.push(event))
  return { pool, coordination, runtime, events, schema }
}

/** Resolves once `condition` holds (checked every 10 ms); rejects after `ms`. */
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  ms: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
