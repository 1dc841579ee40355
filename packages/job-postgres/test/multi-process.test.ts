// The strategies across processes, each row of the table with 2–4 forked
// Node processes (one runtime and one pg Pool each, the built package),
// checked from what the bodies report: the table every engine passes.

import { describeAcrossProcesses } from '@vega/distributed-tests/processes'
import { expect } from 'vitest'
import { freshSchema, poolOf, rows, usePostgres } from './support.js'
import { startWorkers } from './workers.js'

const LEASE = 1500

const pg = usePostgres()

// The user passes their own pool: the newest pg 8 and the oldest the peer range accepts.
for (const [client, module] of [
  ['pg 8.23', 'pg'],
  ['pg 8.0.3', 'pg-8-0'],
] as const) {
  const schema = freshSchema()
  describeAcrossProcesses({
    title: `the strategies across 4 processes on one Postgres, with ${client} pools`,
    lease: LEASE,
    start: () => startWorkers(4, { url: pg.url, schema, leaseMs: LEASE, pg: module }),
    async nothingLeft() {
      // Nothing but fence rows (and dedupe results until their lease-long expiry) remains.
      const pool = poolOf(pg.url)
      const left = await rows(
        pool,
        `SELECT 'holders' AS t, count(*)::int AS n FROM "${schema}".holders
         UNION ALL SELECT 'waiters', count(*)::int FROM "${schema}".waiters`,
      )
      expect(left).toEqual([
        { t: 'holders', n: 0 },
        { t: 'waiters', n: 0 },
      ])
      const fences = await rows(pool, `SELECT count(*)::int AS n FROM "${schema}".fences`)
      expect(fences[0]?.n).toBeGreaterThan(0)
    },
  })
}
