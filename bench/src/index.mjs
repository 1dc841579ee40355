// Runs the benchmark suite: `node --expose-gc src/index.mjs [--quick] [--only a,b] [--rounds N] [--warmup N] [--no-write] [--out file]`.
// Exits 1 when a scenario's result verification fails (never for a missed target).

import { fileURLToPath } from 'node:url'
import {
  formatCheck,
  formatScenario,
  formatSizes,
  hasGc,
  machineInfo,
  parseArgs,
  runScenario,
  writeJson,
} from './harness.mjs'

// Loaded on demand, so `--help` and `--only` need only what they run.
const SCENARIOS = [
  ['tasks', './01-tasks.mjs'],
  ['tasks-immediate', './02-tasks-immediate.mjs'],
  ['dedupe', './03-dedupe.mjs'],
  ['serialize', './11-serialize.mjs'],
  ['restart', './12-restart.mjs'],
  ['exhaust', './13-exhaust.mjs'],
  ['keep-latest', './14-keep-latest.mjs'],
  ['keep-latest-2', './15-keep-latest-2.mjs'],
  ['uncontended', './16-uncontended.mjs'],
  ['aggregate', './04-aggregate.mjs'],
  ['debounce', './05-debounce.mjs'],
  ['events', './06-events.mjs'],
  ['async-context', './09-async-context.mjs'],
  ['priorities', './07-priorities.mjs'],
  ['rate', './08-rate.mjs'],
  ['memory', './memory.mjs'],
  ['redis-overhead', './redis-overhead.mjs'],
  ['redis-serialize', './redis-serialize.mjs'],
  ['redis-bus', './redis-bus.mjs'],
  ['postgres-overhead', './postgres-overhead.mjs'],
  ['postgres-serialize', './postgres-serialize.mjs'],
  ['postgres-bus', './postgres-bus.mjs'],
  ['otel', './10-otel.mjs'],
]
const ALL = [...SCENARIOS.map(([id]) => id), 'sizes']

async function load(file) {
  try {
    return (await import(file)).default
  } catch (error) {
    if (error?.code === 'ERR_MODULE_NOT_FOUND' && /@vega[\\/]/.test(error.message)) {
      throw new Error(
        `${error.message}\nBuild the measured packages first: pnpm turbo run build --filter=@vega/bench^...`,
      )
    }
    throw error
  }
}

const HELP = `usage: pnpm --filter @vega/bench bench [-- options]
  --quick          smaller N, 1 warm-up + 3 rounds (a smoke run)
  --only a,b       run only these: ${ALL.join(', ')}
  --rounds N       measured rounds per scenario (default 7, quick 3)
  --warmup N       warm-up rounds per scenario (default 2, quick 1)
  --budget S       seconds per scenario after which no round is added (≥ 3 rounds; default 240, quick 20)
  --no-write       do not write the JSON file
  --out file       JSON path (default bench/results/latest.json)`

async function main() {
  const options = parseArgs(process.argv.slice(2))
  if (options.help) {
    console.log(HELP)
    return 0
  }
  const selected = options.only ?? ALL
  for (const id of selected) {
    if (!ALL.includes(id))
      throw new Error(`--only: unknown scenario "${id}"; known: ${ALL.join(', ')}`)
  }
  if (!hasGc()) {
    console.warn('warning: run with node --expose-gc; heap figures are meaningless without it')
  }
  const log = (line) => process.stderr.write(`${line}\n`)
  const machineBefore = machineInfo()
  console.log(
    `@vega/bench — ${options.quick ? 'QUICK (smoke) run' : 'full run'}, ${options.warmup} warm-up + ${options.rounds} rounds, node ${machineBefore.node}, ${machineBefore.cpus} CPUs, load ${machineBefore.loadavg.join(' ')}`,
  )
  console.log('ratios are medians relative to the lower bound measured in the same run\n')
  const results = []
  const failures = []
  for (const [id, file] of SCENARIOS) {
    if (!selected.includes(id)) continue
    log(`running ${id} …`)
    try {
      const scenario = await load(file)
      const result = await runScenario(scenario, options, log)
      results.push(result)
      console.log(`${formatScenario(result)}\n`)
    } catch (error) {
      failures.push({ scenario: id, error: String(error?.stack ?? error) })
      console.log(`${id}: FAILED — ${error?.message ?? error}\n`)
    }
  }
  let sizes
  if (selected.includes('sizes')) {
    try {
      const { measureSizes } = await import('./sizes.mjs')
      sizes = await measureSizes()
      console.log(`${formatSizes(sizes)}\n`)
    } catch (error) {
      failures.push({ scenario: 'sizes', error: String(error?.stack ?? error) })
      console.log(`sizes: FAILED — ${error?.message ?? error}\n`)
    }
  }
  const checks = results.flatMap((r) => r.checks.map((c) => ({ scenario: r.id, ...c })))
  console.log('targets (reported, not asserted):')
  for (const c of checks) console.log(`  ${c.scenario}: ${formatCheck(c)}`)
  const machineAfter = machineInfo()
  const report = {
    generatedAt: new Date().toISOString(),
    quick: options.quick,
    rounds: options.rounds,
    warmup: options.warmup,
    machine: { ...machineBefore, loadavgAfter: machineAfter.loadavg },
    note: 'Times are medians; compare ratios, not absolute times, and only from runs on an idle machine.',
    scenarios: results,
    sizes,
    failures,
  }
  if (options.write) {
    const out = options.out ?? fileURLToPath(new URL('../results/latest.json', import.meta.url))
    writeJson(out, report)
    console.log(`\nwrote ${out}`)
  }
  if (failures.length > 0) {
    console.log(`\n${failures.length} scenario(s) failed verification:`)
    for (const f of failures) console.log(`  ${f.scenario}: ${f.error.split('\n')[0]}`)
    return 1
  }
  return 0
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (error) => {
    console.error(error)
    process.exitCode = 2
  },
)
