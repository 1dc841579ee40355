// Postgres scenario 1: the per-call overhead of each cross-process strategy,
// uncontended: N calls one after another (each awaited), one key, on the
// bench's own Postgres. Lower bound: a hand-written lease in a table —
// INSERT … ON CONFLICT … RETURNING to take it, DELETE to give it back (two
// round trips).

import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, run, shutdown } from '@vega/job-core'
import { createPostgresCoordination, migrate } from '@vega/job-postgres'
import pg from 'pg'
import { handCalls, overheadChecks } from './distributed.mjs'
import { HAND_TABLE, handLease, postgresUrl } from './postgres-server.mjs'

// The server starts, and the schema and the hand table are made, when the
// scenario loads, so no timed run pays for them.
const setupPool = new pg.Pool({ connectionString: await postgresUrl(), max: 1 })
await migrate(setupPool, { schema: 'vega_bench' })
await setupPool.query(HAND_TABLE)
await setupPool.end()

const HAND = 'hand INSERT … ON CONFLICT + DELETE'
const FLOOR = 'floor: the hand lease in a job-core task per call'
const STRATEGIES = ['dedupe', 'restart', 'serialize', 'exhaust', 'keepLatest']
let rounds = 0

async function poolOf() {
  const pool = new pg.Pool({ connectionString: await postgresUrl(), max: 4 })
  await pool.query('SELECT 1')
  return pool
}

/** `n` hand leases one after another; with `inTasks`, each inside a job-core task. */
async function handRun(n, { inTasks }) {
  const pool = await poolOf()
  const key = `bench-hand-${inTasks ? 'task-' : ''}${++rounds}`
  const sum = await handCalls(n, { inTasks }, (i) => handLease(pool, key, i))
  const left = (await pool.query('SELECT 1 FROM bench_hand_lease WHERE key = $1', [key])).rowCount
  await pool.end()
  return { calls: n, sum, expected: (n * (n + 1)) / 2, left }
}

/** One pool, coordination and runtime per run: the run ends with shutdown, so nothing is left over. */
async function strategyRun(strategy, n) {
  const pool = await poolOf()
  const coordination = createPostgresCoordination({ pool, schema: 'vega_bench', leaseMs: 10_000 })
  const runtime = createRuntime({ plugins: [installCoordination, coordination.plugin] })
  const key = `k${++rounds}`
  const fn = withCoordinator((ctx) => ctx.taskId, coordination[strategy], { key })
  let sum = 0
  for (let i = 0; i < n; i++) sum += await run(runtime, fn)
  await shutdown(runtime)
  const left = (await pool.query('SELECT 1 FROM vega_bench.holders')).rowCount
  await pool.end()
  return { calls: n, sum, expected: (n * (n + 1)) / 2, left }
}

export default {
  id: 'postgres-overhead',
  title: 'uncontended calls one after another on a local Postgres, per strategy',
  size: { full: 2_000, quick: 50 },
  target: 'each strategy ≤ 1.5× the hand INSERT … ON CONFLICT + DELETE',
  peers: [
    { name: HAND, baseline: true, run: (n) => handRun(n, { inTasks: false }) },
    { name: FLOOR, info: true, run: (n) => handRun(n, { inTasks: true }) },
    ...STRATEGIES.map((strategy) => ({
      name: `job-postgres ${strategy}`,
      run: (n) => strategyRun(strategy, n),
    })),
  ],
  ...overheadChecks({
    engine: 'job-postgres',
    strategies: STRATEGIES,
    hand: HAND,
    floor: FLOOR,
    left: 'lease row(s) left after the run',
  }),
}
