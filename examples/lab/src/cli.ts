import { parseArgs } from 'node:util'
import { type LabCost, measureCallCost } from './cost.js'
import { createStyle, formatCosts, formatReport } from './report.js'
import { DEFAULT_CALLS, DEFAULT_DURATION, runScenario, type ScenarioResult } from './scenario.js'
import {
  DEFAULT_LIMIT,
  isStrategyName,
  STRATEGY_NAMES,
  type StrategySpec,
  strategyLabel,
} from './strategies.js'

/** What the CLI writes to and reads its environment from; the bin passes the process's. */
export interface CliIo {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  /** Whether stdout is a terminal: colors only then (unless NO_COLOR / FORCE_COLOR say otherwise). */
  readonly isTTY: boolean
  readonly env: Readonly<Record<string, string | undefined>>
}

/** The default set: plain run() and the built-ins, then the two hand-written coordinators. */
export const DEFAULT_STRATEGIES: readonly StrategySpec[] = [
  { name: 'none' },
  { name: 'dedupe' },
  { name: 'restart' },
  { name: 'serialize' },
  { name: 'exhaust' },
  { name: 'keepLatest' },
  { name: 'bounded', limit: DEFAULT_LIMIT },
  { name: 'forgetful' },
]

/** Version of the `--json` document; bumped when a field changes meaning or disappears. */
export const JSON_FORMAT = 1

export const USAGE = `Usage: pnpm lab [-- options]

Fires N calls with one key, back-to-back, at a real runtime under each
coordination strategy (call i's body sleeps D ms and returns i), and shows
which bodies ran, how each call ended and what each caller received.

Options:
  --strategy <list>   comma-separated: ${STRATEGY_NAMES.join(', ')}, all
                      (default all); bounded takes a limit as bounded:N
  --calls <n>         calls per strategy (default ${DEFAULT_CALLS})
  --duration <ms>     how long each body sleeps (default ${DEFAULT_DURATION})
  --limit <n>         the limit of a plain "bounded" (default ${DEFAULT_LIMIT})
  --json              print one JSON document instead of tables
  --cost              also measure what one call of each strategy costs,
                      in a burst over 100 keys and one call after another,
                      next to a plain task (a rough figure; bench/ has the
                      careful one)
  -h, --help          this text

Examples:
  pnpm lab -- --strategy restart,serialize --duration 200
  pnpm lab -- --strategy bounded:1,bounded:2 --calls 6
  pnpm --silent lab -- --json > facts.json   (the JSON document alone)
  pnpm lab -- --strategy serialize,keepLatest --cost
`

class UsageError extends Error {
  override name = 'UsageError'
}

export interface CliOptions {
  readonly strategies: readonly StrategySpec[]
  readonly calls: number
  readonly duration: number
  readonly json: boolean
  readonly cost: boolean
  readonly help: boolean
}

/** Parses argv (without `node` and the script). Throws `UsageError` with a message for people. */
export function parseCliArgs(argv: readonly string[]): CliOptions {
  // `pnpm lab -- --json` forwards the `--` itself.
  const args = joinNegativeValues(argv[0] === '--' ? argv.slice(1) : [...argv])
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(args)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const { values } = parsed
  const calls = integer('--calls', values.calls, DEFAULT_CALLS, 1, 1000)
  const duration = integer('--duration', values.duration, DEFAULT_DURATION, 0, 60_000)
  const limit = integer('--limit', values.limit, DEFAULT_LIMIT, 1, 1000)
  const strategies = parseStrategies(values.strategy, limit)
  return {
    strategies,
    calls,
    duration,
    json: values.json === true,
    cost: values.cost === true,
    help: values.help === true,
  }
}

const VALUE_FLAGS = new Set(['--strategy', '--calls', '--duration', '--limit'])

/**
 * `--calls -1` would reach parseArgs as a flag followed by an option `-1`
 * ("ambiguous argument"); glue a negative number to its flag so that the
 * range check below answers with the lab's own message.
 */
function joinNegativeValues(args: readonly string[]): string[] {
  const out: string[] = []
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string
    const next = args[index + 1]
    if (VALUE_FLAGS.has(arg) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`)
      index++
    } else {
      out.push(arg)
    }
  }
  return out
}

function parse(args: string[]) {
  return parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      strategy: { type: 'string' },
      calls: { type: 'string' },
      duration: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
      cost: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })
}

function integer(
  flag: string,
  raw: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}, got '${raw}'.`)
  }
  return value
}

function parseStrategies(raw: string | undefined, limit: number): readonly StrategySpec[] {
  if (raw === undefined || raw.trim() === 'all') {
    return DEFAULT_STRATEGIES.map((spec) =>
      spec.name === 'bounded' ? { name: 'bounded', limit } : spec,
    )
  }
  const specs: StrategySpec[] = []
  for (const item of raw.split(',').map((part) => part.trim())) {
    if (item === 'all') {
      specs.push(...parseStrategies(undefined, limit))
      continue
    }
    const match = /^bounded(?::|\()(\d+)\)?$/.exec(item)
    if (match !== null) {
      specs.push({ name: 'bounded', limit: integer('bounded:N', match[1], limit, 1, 1000) })
      continue
    }
    if (!isStrategyName(item)) {
      throw new UsageError(
        `--strategy: unknown strategy '${item}'; expected ${STRATEGY_NAMES.join(', ')}, bounded:N or all.`,
      )
    }
    specs.push(item === 'bounded' ? { name: 'bounded', limit } : { name: item })
  }
  return specs
}

/** The `--json` document. */
export interface LabDocument {
  readonly lab: '@vega/lab'
  readonly format: typeof JSON_FORMAT
  readonly options: {
    readonly calls: number
    readonly duration: number
    readonly strategies: readonly string[]
  }
  readonly runs: readonly ScenarioResult[]
  /** With `--cost`: what one call of each strategy costs, in `runs`' order. */
  readonly costs?: readonly LabCost[]
}

/** Runs the CLI; resolves to the exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let options: CliOptions
  try {
    options = parseCliArgs(argv)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    io.stderr(`lab: ${error.message}\nRun with --help for the options.\n`)
    return 2
  }
  if (options.help) {
    io.stdout(USAGE)
    return 0
  }
  const runs: ScenarioResult[] = []
  // One after another: each strategy gets its own runtime and the machine to itself.
  for (const strategy of options.strategies) {
    runs.push(await runScenario({ strategy, calls: options.calls, duration: options.duration }))
  }
  const costs: LabCost[] | undefined = options.cost ? [] : undefined
  if (costs !== undefined) {
    for (const strategy of options.strategies) {
      costs.push({ strategy: strategyLabel(strategy), ...(await measureCallCost(strategy)) })
    }
  }
  if (options.json) {
    const document: LabDocument = {
      lab: '@vega/lab',
      format: JSON_FORMAT,
      options: {
        calls: options.calls,
        duration: options.duration,
        strategies: options.strategies.map(strategyLabel),
      },
      runs,
      ...(costs === undefined ? {} : { costs }),
    }
    io.stdout(`${JSON.stringify(document, null, 2)}\n`)
  } else {
    const style = createStyle(useColor(io))
    const report = formatReport(runs, style)
    io.stdout(`${costs === undefined ? report : `${report}\n\n${formatCosts(costs, style)}`}\n`)
  }
  return 0
}

/** Colors on a terminal only; NO_COLOR turns them off, FORCE_COLOR on (https://no-color.org). */
export function useColor(io: Pick<CliIo, 'isTTY' | 'env'>): boolean {
  if (io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '') return false
  if (io.env.FORCE_COLOR !== undefined && io.env.FORCE_COLOR !== '0') return true
  return io.isTTY
}
