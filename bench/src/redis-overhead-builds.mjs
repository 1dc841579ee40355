// Compares the uncontended Redis call of two (or more) builds in one process,
// on one redis-server: the `redis-overhead` workload, side by side.
//   node --expose-gc src/redis-overhead-builds.mjs <checkout A> <checkout B> [--only dedupe,restart,…] [--rounds N] [--n N] [--collect]
//
// Each checkout must be built; its job-core, job-coordination and job-redis
// are imported from `<checkout>/packages/<name>/dist/index.js` (each build
// with the packages of its own checkout), so both builds live side by side.
// Every round runs the hand lease once per strategy and each build right
// after it, builds in alternating order, after one warm-up round. A run is timed as the scenario
// times it: client, coordination and runtime made, the calls, shutdown. The
// report gives, per strategy, each build's median ratio to the hand lease,
// the median of the per-round ratios of each later build to the first (with
// quartiles), and the client CPU per call (`process.cpuUsage`). On a loaded
// machine the ratio between builds within a round is far steadier than
// figures from runs taken minutes apart. `--collect` runs a full garbage
// collection before every run, as the bench's harness does (see the bench's
// README: it costs the strategies far more than the hand lease).

import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { startRedisServer } from '@vega/redis-server'
import { Redis } from 'ioredis'
import { handClient, handLease } from './redis-server.mjs'

const STRATEGIES = ['dedupe', 'restart', 'serialize', 'exhaust', 'keepLatest']
const USAGE =
  'usage: node --expose-gc src/redis-overhead-builds.mjs <checkout A> <checkout B> [more checkouts] [--only dedupe,restart,serialize,exhaust,keepLatest] [--rounds N] [--n N] [--collect]'

function parse(argv) {
  const options = { checkouts: [], only: STRATEGIES, rounds: 11, n: 1000, collect: false }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--only') options.only = argv[++i]?.split(',') ?? []
    else if (arg === '--rounds') options.rounds = Number(argv[++i])
    else if (arg === '--n') options.n = Number(argv[++i])
    else if (arg === '--collect') options.collect = true
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
  if (options.collect && typeof globalThis.gc !== 'function') {
    throw new TypeError('--collect needs node --expose-gc')
  }
  return options
}

async function load(checkout) {
  const from = (name) =>
    import(pathToFileURL(resolve(checkout, 'packages', name, 'dist/index.js')).href)
  const [core, coordination, redis] = await Promise.all([
    from('job-core'),
    from('job-coordination'),
    from('job-redis'),
  ])
  return { name: checkout, core, coordination, redis }
}

let runs = 0

let collectFirst = false

/** Times `work` (wall and this process's CPU), per call; with --collect after a full collection. */
async function timed(n, work) {
  if (collectFirst) {
    globalThis.gc()
    globalThis.gc()
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  await work()
  const ms = performance.now() - started
  const cpu = process.cpuUsage(cpuBefore)
  return { ms, cpuPerCallUs: (cpu.user + cpu.system) / n }
}

/** The lower bound: SET NX PX to take, a Lua compare-and-delete (by SHA) to give back. */
function hand(url, n) {
  return timed(n, async () => {
    const redis = handClient(url)
    const key = `builds-hand-${++runs}`
    for (let i = 1; i <= n; i++) await handLease(redis, key, i)
    redis.disconnect()
  })
}

function strategyRun(build, strategy, url, n) {
  let sum = 0
  return timed(n, async () => {
    const redis = new Redis(url)
    const cluster = build.redis.createRedisCoordination({
      redis,
      prefix: `builds-${++runs}`,
      leaseMs: 10_000,
    })
    const runtime = build.core.createRuntime({
      plugins: [build.coordination.installCoordination, cluster.plugin],
    })
    const fn = build.coordination.withCoordinator((ctx) => ctx.taskId, cluster[strategy], {
      key: 'k',
    })
    for (let i = 0; i < n; i++) sum += await build.core.run(runtime, fn)
    await build.core.shutdown(runtime)
    redis.disconnect()
  }).then((timing) => {
    if (sum !== (n * (n + 1)) / 2) throw new Error(`${build.name} ${strategy}: wrong values`)
    return timing
  })
}

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.round((sorted.length - 1) * q)]
}

async function main() {
  const options = parse(process.argv.slice(2))
  collectFirst = options.collect
  const builds = await Promise.all(options.checkouts.map(load))
  const server = await startRedisServer({
    who: 'redis-overhead-builds',
    folderPrefix: 'vega-bench-redis-',
    unref: true,
  })
  process.on('exit', () => server.killNow())
  const n = options.n
  // rows[strategy][b] = per round { ratio to the hand lease, ms, cpu per call }
  const rows = Object.fromEntries(options.only.map((s) => [s, builds.map(() => [])]))
  // Round 0 warms every build up (the JIT, the server's script cache) and is not kept.
  for (let round = 0; round <= options.rounds; round++) {
    const order = builds.map((_, b) => b)
    if (round % 2 === 1) order.reverse()
    for (const strategy of options.only) {
      const base = await hand(server.url, n)
      for (const b of order) {
        const run = await strategyRun(builds[b], strategy, server.url, n)
        if (round === 0) continue
        rows[strategy][b].push({ toHand: run.ms / base.ms, ms: run.ms, cpu: run.cpuPerCallUs })
      }
    }
    process.stderr.write(`  ${round === 0 ? 'warm-up' : `round ${round}/${options.rounds}`}\n`)
  }
  console.log(
    `${n} uncontended calls per run, ${options.rounds} rounds, load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
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
