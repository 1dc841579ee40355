// The driver both engines' `*-overhead-builds` scripts share: two (or more)
// builds' uncontended calls in one process, against one server, each round
// running the hand lease once per strategy and every build right after it
// (builds in alternating order, after one warm-up round that is not kept).
// The report gives, per strategy, each build's median ratio to the hand
// lease and client CPU per call (`process.cpuUsage`), and the median of the
// per-round ratios of each later build to the first, with quartiles. On a
// loaded machine the ratio between builds within a round is far steadier
// than figures from runs taken minutes apart. `--collect` runs a full
// garbage collection before every run (needs `--expose-gc`), as the bench's
// harness does.

import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const STRATEGIES = ['dedupe', 'restart', 'serialize', 'exhaust', 'keepLatest']

function parse(argv, usage) {
  const options = { checkouts: [], only: STRATEGIES, rounds: 7, n: 1000, collect: false }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--only') options.only = argv[++i]?.split(',') ?? []
    else if (arg === '--rounds') options.rounds = Number(argv[++i])
    else if (arg === '--n') options.n = Number(argv[++i])
    else if (arg === '--collect') options.collect = true
    else if (arg.startsWith('--')) throw new TypeError(`unknown option ${arg}\n${usage}`)
    else options.checkouts.push(arg)
  }
  if (options.checkouts.length < 2) throw new TypeError(usage)
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

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.round((sorted.length - 1) * q)]
}

/**
 * Runs the comparison. `engine` is the package's folder (`job-redis`,
 * `job-postgres`); each build gets `core`, `coordination` and `engine` (that
 * package's module), its checkout as `name` and its index. `start(builds)`
 * readies the server and resolves with its URL; `hand(url, n, timed)` and
 * `strategyRun(build, strategy, url, n, timed)` time one run with `timed`.
 */
export async function compareOverheadBuilds({ script, engine, start, hand, strategyRun }) {
  const usage = `usage: node --expose-gc src/${script} <checkout A> <checkout B> [more checkouts] [--only ${STRATEGIES.join(',')}] [--rounds N] [--n N] [--collect]`
  const options = parse(process.argv.slice(2), usage)
  const timed = async (n, work) => {
    if (options.collect) {
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
  const builds = await Promise.all(
    options.checkouts.map(async (checkout, index) => {
      const from = (name) =>
        import(pathToFileURL(resolve(checkout, 'packages', name, 'dist/index.js')).href)
      const [core, coordination, engineModule] = await Promise.all([
        from('job-core'),
        from('job-coordination'),
        from(engine),
      ])
      return { name: checkout, index, core, coordination, engine: engineModule }
    }),
  )
  const url = await start(builds)
  const n = options.n
  const loads = [loadavg()[0]]
  // rows[strategy][b] = per round { ratio to the hand lease, ms, cpu per call }
  const rows = Object.fromEntries(options.only.map((s) => [s, builds.map(() => [])]))
  const handCpu = []
  // Round 0 warms every build up (the JIT, the server's caches) and is not kept.
  for (let round = 0; round <= options.rounds; round++) {
    const order = builds.map((_, b) => b)
    if (round % 2 === 1) order.reverse()
    for (const strategy of options.only) {
      const base = await hand(url, n, timed)
      if (round > 0) handCpu.push(base.cpuPerCallUs)
      for (const b of order) {
        const run = await strategyRun(builds[b], strategy, url, n, timed)
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
