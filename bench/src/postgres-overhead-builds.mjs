// Compares the uncontended Postgres call of two (or more) builds in one
// process, on one Postgres: the `postgres-overhead` workload, side by side.
//   node src/postgres-overhead-builds.mjs <checkout A> <checkout B> [--only dedupe,restart,…] [--rounds N] [--n N]
//
// Each checkout must be built; its job-core, job-coordination and
// job-postgres are imported from `<checkout>/packages/<name>/dist/index.js`
// (each with the packages of its own checkout), and each build migrates a
// schema of its own (two builds may differ in their schema). Every round
// runs the hand lease once per strategy and each build right after it,
// builds in alternating order, after one warm-up round. A run is timed as
// the scenario times it: pool, coordination and runtime made, the calls,
// shutdown. The report gives, per strategy, each build's median ratio to
// the hand lease, the median of the per-round ratios of each later build to
// the first (with quartiles), and the client CPU per call
// (`process.cpuUsage`, the hand lease's too). On a loaded machine the ratio
// between builds within a round is far steadier than figures from runs
// taken minutes apart.

import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import pg from 'pg'
import { HAND_TABLE, handLease, postgresUrl } from './postgres-server.mjs'

const STRATEGIES = ['dedupe', 'restart', 'serialize', 'exhaust', 'keepLatest']
const USAGE =
  'usage: node src/postgres-overhead-builds.mjs <checkout A> <checkout B> [more checkouts] [--only dedupe,restart,serialize,exhaust,keepLatest] [--rounds N] [--n N]'

function parse(argv) {
  const options = { checkouts: [], only: STRATEGIES, rounds: 7, n: 1000 }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--only') options.only = argv[++i]?.split(',') ?? []
    else if (arg === '--rounds') options.rounds = Number(argv[++i])
    else if (arg === '--n') options.n = Number(argv[++i])
    else if (arg.startsWith('--')) throw new TypeError(`unknown option ${arg}\n${USAGE}`)
    else options.checkouts.push(arg)
  }
  if (options.checkouts.length < 2) throw new TypeError(USAGE)
  for (const strategy of options.only) {
    if (!STRATEGIES.includes(strategy)) {
      throw new TypeError(`--only: unknown strategy "${strategy}"; known: ${STRATEGIES.join(', ')}`)
    }
  }
  if (!Number.isInteger(options.rounds) || options.rounds < 2) {
    throw new RangeError(`--rounds must be an integer ≥ 2, got ${options.rounds}`)
  }
  if (!Number.isInteger(options.n) || options.n < 1) {
    throw new RangeError(`--n must be a positive integer, got ${options.n}`)
  }
  return options
}

async function load(checkout, index) {
  const from = (name) =>
    import(pathToFileURL(resolve(checkout, 'packages', name, 'dist/index.js')).href)
  const [core, coordination, postgres] = await Promise.all([
    from('job-core'),
    from('job-coordination'),
    from('job-postgres'),
  ])
  return { name: checkout, schema: `vega_builds_${index}`, core, coordination, postgres }
}

let runs = 0

/** Times `work` (wall and this process's CPU), per call. */
async function timed(n, work) {
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  await work()
  const ms = performance.now() - started
  const cpu = process.cpuUsage(cpuBefore)
  return { ms, cpuPerCallUs: (cpu.user + cpu.system) / n }
}

async function poolOf(url) {
  const pool = new pg.Pool({ connectionString: url, max: 4 })
  await pool.query('SELECT 1')
  return pool
}

/** The lower bound: INSERT … ON CONFLICT … RETURNING to take, DELETE to give back. */
async function hand(url, n) {
  const pool = await poolOf(url)
  const key = `builds-hand-${++runs}`
  const timing = await timed(n, async () => {
    for (let i = 1; i <= n; i++) await handLease(pool, key, i)
  })
  await pool.end()
  return timing
}

async function strategyRun(build, strategy, url, n) {
  const pool = await poolOf(url)
  let sum = 0
  const timing = await timed(n, async () => {
    const coordination = build.postgres.createPostgresCoordination({
      pool,
      schema: build.schema,
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
  const left = (await pool.query(`SELECT 1 FROM ${build.schema}.holders`)).rowCount
  await pool.end()
  if (sum !== (n * (n + 1)) / 2) throw new Error(`${build.name} ${strategy}: wrong values`)
  if (left !== 0) throw new Error(`${build.name} ${strategy}: ${left} lease row(s) left`)
  return timing
}

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.round((sorted.length - 1) * q)]
}

async function main() {
  const options = parse(process.argv.slice(2))
  const builds = await Promise.all(options.checkouts.map(load))
  const url = await postgresUrl()
  const setup = await poolOf(url)
  await setup.query(HAND_TABLE)
  for (const build of builds) await build.postgres.migrate(setup, { schema: build.schema })
  await setup.end()
  const n = options.n
  const loads = [loadavg()[0]]
  // rows[strategy][b] = per round { ratio to the hand lease, ms, cpu per call }
  const rows = Object.fromEntries(options.only.map((s) => [s, builds.map(() => [])]))
  const handCpu = []
  // Round 0 warms every build up (the JIT, the prepared statements) and is not kept.
  for (let round = 0; round <= options.rounds; round++) {
    const order = builds.map((_, b) => b)
    if (round % 2 === 1) order.reverse()
    for (const strategy of options.only) {
      const base = await hand(url, n)
      if (round > 0) handCpu.push(base.cpuPerCallUs)
      for (const b of order) {
        const run = await strategyRun(builds[b], strategy, url, n)
        if (round === 0) continue
        rows[strategy][b].push({ toHand: run.ms / base.ms, ms: run.ms, cpu: run.cpuPerCallUs })
      }
    }
    loads.push(loadavg()[0])
    process.stderr.write(`  ${round === 0 ? 'warm-up' : `round ${round}/${options.rounds}`}\n`)
  }
  console.log(
    `${n} uncontended calls per run, ${options.rounds} rounds, load (1 min) ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}; hand lease client CPU ${quantile(handCpu, 0.5).toFixed(0)} µs/call`,
  )
  for (const strategy of options.only) {
    const perBuild = rows[strategy]
    const cells = builds.map((build, b) => {
      const toHand = quantile(
        perBuild[b].map((r) => r.toHand),
        0.5,
      )
      const cpu = quantile(
        perBuild[b].map((r) => r.cpu),
        0.5,
      )
      return `${build.name}: ${toHand.toFixed(2)}× the hand lease, client CPU ${cpu.toFixed(0)} µs/call`
    })
    console.log(`${strategy}\n  ${cells.join('\n  ')}`)
    for (let b = 1; b < builds.length; b++) {
      const ratios = perBuild[b].map((r, i) => r.ms / perBuild[0][i].ms)
      console.log(
        `  ${builds[b].name} / ${builds[0].name}: ${quantile(ratios, 0.5).toFixed(2)} (quartiles ${quantile(ratios, 0.25).toFixed(2)}–${quantile(ratios, 0.75).toFixed(2)})`,
      )
    }
  }
}

await main()
process.exit(0)
