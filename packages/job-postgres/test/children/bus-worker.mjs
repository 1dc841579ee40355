// One process of the bus's multi-process tests on the BUILT package (dist):
// the producer or consumer is @vega/distributed-tests' serveBusWorker; this
// child only says how to reach Postgres. In transaction mode a handler also
// writes one row per delivery through its `tx` into the effects table (the
// application's write).

import { serveBusWorker } from '@vega/distributed-tests/bus-worker-child'
import pg from 'pg'
import { createPostgresAggregateBus } from '../../dist/index.js'

let effects

serveBusWorker({
  async connect(init) {
    const pool = new pg.Pool({ connectionString: init.url, max: init.poolSize ?? 10 })
    pool.on('error', () => {})
    const bus = createPostgresAggregateBus({
      pool,
      schema: init.schema,
      partitions: init.partitions,
      leaseMs: init.leaseMs,
    })
    effects = init.effects
    await pool.query('SELECT 1')
    return { bus, close: () => pool.end() }
  },
  consumeOptions: (message) => ({ transaction: message.transaction === true }),
  async effect({ id, body, fence, tx }) {
    if (tx === undefined) return
    await tx.query(`INSERT INTO ${effects} (id, seq, fence) VALUES ($1, $2, $3)`, [
      id,
      body.seq,
      fence,
    ])
  },
})
