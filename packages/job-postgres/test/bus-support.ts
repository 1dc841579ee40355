import pg from 'pg'
import {
  createPostgresAggregateBus,
  type Delivery,
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

/** A bus on `url` with a fresh schema; 8 partitions and a 600 ms lease unless told. */
export function busSetup(
  url: string,
  options: Partial<PostgresAggregateBusOptions> = {},
  poolSize = 20,
): BusSetup {
  const pool = new pg.Pool({ connectionString: url, max: poolSize })
  pool.on('error', () => {})
  const schema = options.schema ?? uniqueSchema()
  const bus = createPostgresAggregateBus({ pool, schema, partitions: 8, leaseMs: 600, ...options })
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

/** Sends `perId` messages to each of `ids`, bodies { seq }, round-robin over ids, in order per id. */
export async function sendAll(
  bus: PostgresAggregateBus,
  aggregate: string,
  ids: readonly string[],
  perId: number,
): Promise<void> {
  for (let seq = 1; seq <= perId; seq++) {
    await Promise.all(ids.map((id) => bus.send({ aggregate, id, body: { seq } })))
  }
}

export interface Handled {
  readonly id: string
  readonly seq: number
  readonly attempt: number
  readonly fence: number
  readonly consumerId: string
}

/** A handler that records each delivery and checks nobody else holds its id. */
export function recorder(): {
  handled: Handled[]
  overlaps: string[]
  readonly maxInside: number
  handle: (delivery: Delivery<{ seq: number }>) => Promise<void>
} {
  const handled: Handled[] = []
  const overlaps: string[] = []
  const inside = new Set<string>()
  let maxInside = 0
  return {
    handled,
    overlaps,
    get maxInside() {
      return maxInside
    },
    async handle(delivery) {
      if (inside.has(delivery.id)) overlaps.push(delivery.id)
      inside.add(delivery.id)
      maxInside = Math.max(maxInside, inside.size)
      await new Promise((resolve) => setTimeout(resolve, 1))
      handled.push({
        id: delivery.id,
        seq: delivery.body.seq,
        attempt: delivery.attempt,
        fence: delivery.fence,
        consumerId: delivery.consumerId,
      })
      inside.delete(delivery.id)
    },
  }
}

/** Polls `check` until it holds, or fails with `what` after `ms`. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  ms: number,
  what: string,
): Promise<void> {
  const until = performance.now() + ms
  for (;;) {
    if (await check()) return
    if (performance.now() > until) throw new Error(`not within ${ms} ms: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** A gate a handler waits on until the test opens it. */
export function gated(): { gate: Promise<void>; open: () => void } {
  let open!: () => void
  const gate = new Promise<void>((resolve) => {
    open = resolve
  })
  return { gate, open }
}
