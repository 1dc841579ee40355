import pg from 'pg'
import {
  createPostgresAggregateBus,
  type PostgresAggregateBus,
  type PostgresAggregateBusOptions,
} from '../src/index.js'

let schemas = 0

/** A schema no other test uses: every bus test starts from empty tables. */
export function uniqueSchema(): string {
  return `bus_${process.pid}_${++schemas}_${Math.random().toString(36).slice(2, 6)}`
}

export interface BusSetup {
  readonly pool: pg.Pool
  readonly bus: PostgresAggregateBus
  readonly schema: string
  /** Rows of one of the bus's tables. */
  rows(table: string, where?: string): Promise<Record<string, unknown>[]>
  close(): Promise<void>
}

/**
 * A bus on `url` with a fresh schema; 8 partitions, a 600 ms lease and a
 * 3 s bound on each statement unless told: the short lease keeps ownership
 * tests quick, and the bound is not what these tests check (a loaded
 * machine may take longer than a lease to answer; the fault tests set
 * their own).
 */
export function busSetup(
  url: string,
  options: Partial<PostgresAggregateBusOptions> = {},
  poolSize = 20,
): BusSetup {
  const pool = new pg.Pool({ connectionString: url, max: poolSize })
  pool.on('error', () => {})
  const schema = options.schema ?? uniqueSchema()
  const bus = createPostgresAggregateBus({
    pool,
    schema,
    partitions: 8,
    leaseMs: 600,
    connectTimeoutMs: 3000,
    ...options,
  })
  return {
    pool,
    bus,
    schema,
    async rows(table, where = 'true') {
      return (await pool.query(`SELECT * FROM "${schema}".${table} WHERE ${where}`)).rows
    },
    close: () => pool.end(),
  }
}

// The bus's test helpers every engine shares.
export {
  eventually,
  gated,
  type Handled,
  recorder,
  sendAll,
} from '@vega/distributed-tests/bus'
