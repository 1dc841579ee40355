// Compares two builds of the packages in one process:
//   node --expose-gc src/compare-builds.mjs <checkout A> <checkout B> [--only tasks,aggregate,…] [--rounds N] [--n N] [--cpu]
// (or `pnpm --filter @vega/bench compare-builds ../../other-checkout ../..`).
//
// Each checkout must be built (`pnpm build`); its packages are imported from
// `<checkout>/packages/<name>/dist/index.js`, so both builds live side by side.
// Every round runs A and B back to back, in alternating order, and the
// report is the median of the per-round ratios B/A with its quartiles: a
// round sees one machine load, so the ratio within a round is steadier than
// two medians taken minutes apart (on a shared two-core box, separate full
// runs of `pnpm bench` have seen their baselines move by 25 %). `--cpu`
// times each run by the process's CPU time (user + system, the collector's
// helper threads included) instead of the wall clock: on a loaded machine
// the time a run waits for a core is not its own. Not a
// benchmark against peers: a tool for telling whether a change made a build
// faster.

import { resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'

const USAGE =
  'usage: node --expose-gc src/compare-builds.mjs <checkout A> <checkout B> [--only tasks,tasks-1-listener,aggregate,debounce,dedupe-once,dedupe-per-call] [--rounds N] [--n N] [--cpu]'

function parse(argv) {
  const options = { checkouts: [], only: undefined, rounds: 20, n: undefined, cpu: false }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--only') options.only = argv[++i]?.split(',')
    else if (arg === '--rounds') options.rounds = Number(argv[++i])
    else if (arg === '--n') options.n = Number(argv[++i])
    else if (arg === '--cpu') options.cpu = true
    else if (arg.startsWith('--')) throw new TypeError(`unknown option ${arg}\n${USAGE}`)
    else options.checkouts.push(arg)
  }
  if (options.checkouts.length !== 2) throw new TypeError(USAGE)
  if (!Number.isInteger(options.rounds) || options.rounds < 2) {
    throw new RangeError(`--rounds must be an integer ≥ 2, got ${options.rounds}`)
  }
  if (options.n !== undefined && (!Number.isInteger(options.n) || options.n < 1)) {
    throw new RangeError(`--n must be a positive integer, got ${options.n}`)
  }
  return options
}

async function load(checkout) {
  const from = (name) =>
    import(pathToFileURL(resolve(checkout, 'packages', name, 'dist/index.js')).href)
  const [core, coordination, scheduler] = await Promise.all([
    from('job-core'),
    from('job-coordination'),
    from('job-scheduler'),
  ])
  return { core, coordination, scheduler }
}

// Each workload runs once with one build's packages and returns its time in
// ms; it checks its own result, so a broken build fails loudly.
const WORKLOADS = {
  // The `tasks` scenario: trivial async bodies, 16 at a time, one burst.
  tasks: {
    n: 200_000,
    run: (build, n) => tasks(build, n, false),
  },
  // The `events` scenario's 1-listener peer: the `tasks` workload with one no-op listener.
  'tasks-1-listener': {
    n: 200_000,
    run: (build, n) => tasks(build, n, true),
  },
  // The `aggregate` scenario's runtime path: withAggregate per message over
  // 10k ids and 16 groups, a handler with one await, pushed in one burst.
  aggregate: {
    n: 200_000,
    async run({ core, scheduler }, n) {
      const scheduling = scheduler.installAggregateScheduling({
        parallelism: 16,
        schedulerParallelism: 16,
      })
      const runtime = core.createRuntime({ plugins: [scheduling] })
      let handled = 0
      const handle = async () => {
        await null
        handled++
      }
      const started = performance.now()
      for (let i = 0; i < n; i++) {
        const id = `order-${(i * 7919) % 10_000}`
        core.run(
          runtime,
          scheduler.withAggregate(() => handle(), { aggregate: 'sales.Order', id }),
        )
      }
      await core.shutdown(runtime, { mode: 'drain' })
      const ms = performance.now() - started
      if (handled !== n) throw new Error(`aggregate: ${handled} of ${n} handled`)
      return ms
    },
  },
  // The `debounce` scenario: calls over 1,000 keys in one burst, each a
  // trailing debounce of 1 ms whose caller promise is read at once.
  debounce: {
    n: 200_000,
    async run({ core }, n) {
      const runtime = core.createRuntime()
      const shaper = core.debounce(1)
      const started = performance.now()
      const promises = new Array(n)
      for (let i = 0; i < n; i++) {
        const k = i % KEYS
        promises[i] = core.run(
          runtime,
          core.withShaper(() => i, shaper, { key: k }),
        ).promise
      }
      const values = await Promise.all(promises)
      const ms = performance.now() - started
      // Every caller of key k gets the value of k's last call.
      if (values[0] !== n - KEYS) throw new Error('debounce: wrong result')
      return ms
    },
  },
  'dedupe-once': {
    n: 200_000,
    run: (build, n) => dedupe(build, n, false),
  },
  'dedupe-per-call': {
    n: 200_000,
    run: (build, n) => dedupe(build, n, true),
  },
}

// The `tasks` workload, with or without one no-op listener on the bus.
async function tasks({ core }, n, listened) {
  const runtime = core.createRuntime({ concurrency: 16 })
  let events = 0
  if (listened) {
    core.subscribe(runtime, () => {
      events++
    })
  }
  const started = performance.now()
  const promises = new Array(n)
  for (let i = 0; i < n; i++) promises[i] = core.run(runtime, async () => i).promise
  const values = await Promise.all(promises)
  const ms = performance.now() - started
  if (values[n - 1] !== n - 1 || events !== (listened ? 4 * n : 0)) {
    throw new Error(`tasks${listened ? ' with a listener' : ''}: wrong result`)
  }
  return ms
}

const KEYS = 1000

// The `dedupe` scenario: calls over 1,000 keys in one burst, bound once per
// key or per call, each body settling on the next turn.
async function dedupe({ core, coordination }, n, perCall) {
  const { withCoordinator, dedupeCoordinator, installCoordination } = coordination
  const load = (k) => new Promise((resolve) => setImmediate(resolve, k))
  const bind = (k) => withCoordinator(() => load(k), dedupeCoordinator, { key: ['item', k] })
  const runtime = core.createRuntime({ plugins: [installCoordination] })
  const bound = perCall ? undefined : Array.from({ length: KEYS }, (_, k) => bind(k))
  const started = performance.now()
  const promises = new Array(n)
  for (let i = 0; i < n; i++) {
    const k = i % KEYS
    promises[i] = core.run(runtime, perCall ? bind(k) : bound[k]).promise
  }
  const values = await Promise.all(promises)
  const ms = performance.now() - started
  if (values[n - 1] !== (n - 1) % KEYS) throw new Error('dedupe: wrong result')
  return ms
}

function quantile(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(p * (sorted.length - 1))]
}

// A run's wall time as the workload measured it, or with `cpu` the CPU
// time the whole process spent on it (runtime set-up included).
async function timed(workload, build, n, cpu) {
  globalThis.gc()
  if (!cpu) return workload.run(build, n)
  const before = process.cpuUsage()
  await workload.run(build, n)
  const used = process.cpuUsage(before)
  return (used.user + used.system) / 1000
}

async function main() {
  if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc')
  const options = parse(process.argv.slice(2))
  const [a, b] = await Promise.all(options.checkouts.map(load))
  const names = options.only ?? Object.keys(WORKLOADS)
  for (const name of names) {
    const workload = WORKLOADS[name]
    if (workload === undefined) throw new TypeError(`unknown workload ${name}\n${USAGE}`)
    const n = options.n ?? workload.n
    for (let w = 0; w < 2; w++) {
      await timed(workload, a, n, options.cpu)
      await timed(workload, b, n, options.cpu)
    }
    const ratios = []
    const times = { a: [], b: [] }
    for (let round = 0; round < options.rounds; round++) {
      // Alternate the order: whichever runs second in a round tends to gain.
      const first = round % 2 === 0 ? 'a' : 'b'
      const second = first === 'a' ? 'b' : 'a'
      const builds = { a, b }
      times[first].push(await timed(workload, builds[first], n, options.cpu))
      times[second].push(await timed(workload, builds[second], n, options.cpu))
      ratios.push(times.b[round] / times.a[round])
    }
    console.log(
      `${name.padEnd(16)} B/A ${quantile(ratios, 0.5).toFixed(3)} (quartiles ${quantile(ratios, 0.25).toFixed(3)}–${quantile(ratios, 0.75).toFixed(3)}, ${options.rounds} rounds, n = ${n}${options.cpu ? ', CPU time' : ''}); medians A ${quantile(times.a, 0.5).toFixed(0)} ms, B ${quantile(times.b, 0.5).toFixed(0)} ms`,
    )
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error)
  process.exitCode = 1
})
