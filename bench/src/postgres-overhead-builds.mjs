// Compares the uncontended Postgres call of two (or more) builds in one
// process, on one Postgres: the `postgres-overhead` workload, side by side.
//   node --expose-gc src/postgres-overhead-builds.mjs <checkout A> <checkout B> [--only dedupe,restart,…] [--rounds N] [--n N] [--collect]
//
// Each checkout must be built; its job-core, job-coordination and
// job-postgres are imported from `<checkout>/packages/<name>/dist/index.js`
// (each with the packages of its own checkout), and each build migrates a
// schema of its own (two builds may differ in their schema). A run is timed
// as the scenario times it: pool, coordination and runtime made, the calls,
// shutdown; then no lease row may be left. The rounds and the report are
// `overhead-builds.mjs`'s.

import pg from 'pg'
import { compareOverheadBuilds } from './overhead-builds.mjs'
import { HAND_TABLE, handLease, postgresUrl } from './postgres-server.mjs'

let runs = 0

const schemaOf = (build) => `vega_builds_${build.index}`

async function poolOf(url) {
  const pool = new pg.Pool({ connectionString: url, max: 4 })
  await pool.query('SELECT 1')
  return pool
}

await compareOverheadBuilds({
  script: 'postgres-overhead-builds.mjs',
  engine: 'job-postgres',
  async start(builds) {
    const url = await postgresUrl()
    const setup = await poolOf(url)
    await setup.query(HAND_TABLE)
    for (const build of builds) await build.engine.migrate(setup, { schema: schemaOf(build) })
    await setup.end()
    return url
  },
  /** The lower bound: INSERT … ON CONFLICT … RETURNING to take, DELETE to give back. */
  async hand(url, n, timed) {
    const pool = await poolOf(url)
    const key = `builds-hand-${++runs}`
    const timing = await timed(n, async () => {
      for (let i = 1; i <= n; i++) await handLease(pool, key, i)
    })
    await pool.end()
    return timing
  },
  async strategyRun(build, strategy, url, n, timed) {
    const pool = await poolOf(url)
    const schema = schemaOf(build)
    let sum = 0
    const timing = await timed(n, async () => {
      const coordination = build.engine.createPostgresCoordination({
        pool,
        schema,
        leaseMs: 10_000,
      })
      const runtime = build.core.createRuntime({
        plugins: [build.coordination.installCoordination, coordination.plugin],
      })
      const fn = build.coordination.withCoordinator((ctx) => ctx.taskId, coordination[strategy], {
        key: `k${++runs}`,
      })
      for (let i = 0; i < n; i++) sum += await build.core.run(runtime, fn)
      await build.core.shutdown(runtime)
    })
    const left = (await pool.query(`SELECT 1 FROM ${schema}.holders`)).rowCount
    await pool.end()
    if (sum !== (n * (n + 1)) / 2) throw new Error(`${build.name} ${strategy}: wrong values`)
    if (left !== 0) throw new Error(`${build.name} ${strategy}: ${left} lease row(s) left`)
    return timing
  },
})
process.exit(0)
