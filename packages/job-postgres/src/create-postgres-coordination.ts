import { assertKnownKeys } from '@vega/job-core'
import {
  type Codec,
  createDistributedCoordination,
  type DistributedCoordination,
  describeValue,
  type LeaderContext,
  resolveCoordinationOptions,
} from '@vega/job-distributed'
import { PgIO } from './internal/pg-io.js'
import type { PostgresPool } from './pool.js'
import { checkSchema } from './schema.js'

/**
 * Options of {@link createPostgresCoordination}.
 *
 * @example
 * ```ts
 * const options: PostgresCoordinationOptions = { pool, schema: 'vega_job', leaseMs: 10_000 }
 * ```
 */
export interface PostgresCoordinationOptions {
  /**
   * The app's `pg` Pool. Each step takes a connection for one statement and
   * gives it back; leases live in tables, never in a held connection. The
   * package never ends it; it opens one more connection of its own (same
   * options) for LISTEN, shared with every bus made with the same pool.
   */
  pool: PostgresPool
  /** The schema the package owns (created and migrated on first use); default `vega_job`. */
  schema?: string
  /** How long a grant holds without renewal, in ms (integer ≥ 10). Holders renew every leaseMs / 3; waiters re-check as often. */
  leaseMs: number
  /** How a dedupe leader's value reaches callers in other processes; strict JSON by default. */
  codec?: Codec
  /**
   * A step that takes longer (no free connection in the pool, a server that
   * does not answer) fails with `PostgresUnavailableError`; it also bounds,
   * on the server, every lock wait of the package's statements
   * (`lock_timeout`). Default min(leaseMs, 5000).
   */
  connectTimeoutMs?: number
  /** What a dedupe leader carries to the callers in other processes that join it; default none. */
  leaderContext?: LeaderContext | undefined
}

/**
 * What {@link createPostgresCoordination} returns: the five strategies across
 * processes, the plugin that connects them to a runtime, `createSerialize`
 * and `inspect()`, the same shape as `@vega/job-redis`'s.
 *
 * @example
 * ```ts
 * const coordination: PostgresCoordination = createPostgresCoordination({ pool, leaseMs: 10_000 })
 * const runtime = createRuntime({ plugins: [installCoordination, coordination.plugin] })
 * ```
 */
export type PostgresCoordination = DistributedCoordination

const OPTIONS = ['pool', 'schema', 'leaseMs', 'codec', 'connectTimeoutMs', 'leaderContext']
const WHO = 'createPostgresCoordination(options)'

function checkPool(pool: unknown): PostgresPool {
  if (pool === undefined || pool === null) {
    throw new TypeError(
      `${WHO}: pool is missing; pass a node-postgres Pool: { pool: new pg.Pool({ connectionString }), … }.`,
    )
  }
  const candidate = pool as { query?: unknown; Client?: unknown; ending?: unknown }
  if (typeof candidate.query !== 'function' || typeof candidate.Client !== 'function') {
    throw new TypeError(
      `${WHO}: pool must be a node-postgres (pg 8) Pool, new pg.Pool(…), got ${describeValue(pool)}.`,
    )
  }
  if (candidate.ending === true) {
    throw new TypeError(`${WHO}: pool was ended (pool.end() was called); pass an open one.`)
  }
  return pool as PostgresPool
}

/**
 * Carries dedupe, restart, serialize, exhaust and keepLatest across processes
 * sharing one Postgres, with leases (renewed every leaseMs / 3 while a body
 * runs) and fencing tokens kept in tables. Within one process each behaves
 * like the local strategy of `@vega/job-coordination`. Throws `TypeError` /
 * `RangeError` for bad options, before touching Postgres; the schema is
 * migrated on first use.
 *
 * @example
 * ```ts
 * import { createRuntime, run } from '@vega/job-core'
 * import { installCoordination, withCoordinator } from '@vega/job-coordination'
 * import { createPostgresCoordination, fencingToken } from '@vega/job-postgres'
 * import pg from 'pg'
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 * const coordination = createPostgresCoordination({ pool, leaseMs: 10_000 })
 * const runtime = createRuntime({ plugins: [installCoordination, coordination.plugin] })
 * const save = (id: string, body: string) =>
 *   withCoordinator(async (ctx) => writeDoc(id, body, (await fencingToken(ctx)).fence), coordination.serialize, {
 *     key: ['doc', id],
 *   })
 * await run(runtime, save('42', 'hello'))
 * ```
 */
export function createPostgresCoordination(
  options: PostgresCoordinationOptions,
): PostgresCoordination {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${WHO}: options must be an object such as { pool, leaseMs: 10_000 }.`)
  }
  assertKnownKeys(WHO, options, OPTIONS)
  const pool = checkPool(options.pool)
  const schema = checkSchema(options.schema ?? 'vega_job', WHO)
  const { leaseMs, codec, connectTimeoutMs, leaderContext } = resolveCoordinationOptions(
    'createPostgresCoordination',
    options,
  )
  const engine = new PgIO({
    pool,
    schema,
    leaseMs,
    connectTimeoutMs,
    sweepMs: Math.max(leaseMs, 1000),
  })
  return createDistributedCoordination(engine, { codec, leaderContext })
}
