import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, run, shutdown, type TaskFn } from '@vega/job-core'
import { prepareStrategy, type StrategySpec } from './strategies.js'

/**
 * What one call of a strategy costs, measured in the lab's own process next
 * to a plain task (`run` without a coordinator). A rough figure for the
 * lab's report, from a few thousand calls per round; the bench (`bench/`, scenarios
 * `serialize`, `restart`, `exhaust`, `keep-latest`, `uncontended`) measures
 * the same two cases carefully, against hand-written code and peers.
 */
export interface CallCost {
  /** Nanoseconds per call in one burst of `burstCalls` calls over `keys` keys (median of the rounds). */
  readonly burstNs: number
  /** Nanoseconds per call, one call after another: nothing to decide (median of the rounds). */
  readonly uncontendedNs: number
  /** The same two for a plain task, measured in the same rounds. */
  readonly plainTask: { readonly burstNs: number; readonly uncontendedNs: number }
  /**
   * The strategy's time over the plain task's, per round (each round runs
   * both back to back, so they share the machine's load), median.
   */
  readonly vsPlainTask: { readonly burst: number; readonly uncontended: number }
  readonly burstCalls: number
  readonly uncontendedCalls: number
  readonly keys: number
  readonly rounds: number
}

/** One strategy's {@link CallCost} in the lab's `--cost` report, named. */
export interface LabCost extends CallCost {
  readonly strategy: string
}

/** Sizes of {@link measureCallCost}'s two runs. */
export interface CallCostOptions {
  readonly burstCalls?: number
  readonly uncontendedCalls?: number
  readonly keys?: number
  /** Measured rounds, after one warm-up (default 7). */
  readonly rounds?: number
}

const body = (call: number) => () => Promise.resolve(call)

/**
 * Measures {@link CallCost} for one strategy: after one warm-up round,
 * `rounds` rounds that each run the strategy and a plain task back to back,
 * in a burst and one call after another.
 */
export async function measureCallCost(
  spec: StrategySpec,
  options: CallCostOptions = {},
): Promise<CallCost> {
  const burstCalls = options.burstCalls ?? 4_000
  const uncontendedCalls = options.uncontendedCalls ?? 1_000
  const keys = options.keys ?? 100
  const rounds = options.rounds ?? 7
  const plain: StrategySpec = { name: 'none' }
  const samples = {
    burst: [] as number[],
    plainBurst: [] as number[],
    uncontended: [] as number[],
    plainUncontended: [] as number[],
  }
  for (let round = 0; round <= rounds; round++) {
    const burst = await timed(spec, burstCalls, keys, 'burst')
    const plainBurst = await timed(plain, burstCalls, keys, 'burst')
    const uncontended = await timed(spec, uncontendedCalls, keys, 'uncontended')
    const plainUncontended = await timed(plain, uncontendedCalls, keys, 'uncontended')
    // Round 0 warms the engine up.
    if (round === 0) continue
    samples.burst.push(burst)
    samples.plainBurst.push(plainBurst)
    samples.uncontended.push(uncontended)
    samples.plainUncontended.push(plainUncontended)
  }
  const ratio = (of: number[], to: number[]) =>
    Math.round(median(of.map((value, index) => value / to[index]!)) * 100) / 100
  return {
    burstNs: Math.round(median(samples.burst)),
    uncontendedNs: Math.round(median(samples.uncontended)),
    plainTask: {
      burstNs: Math.round(median(samples.plainBurst)),
      uncontendedNs: Math.round(median(samples.plainUncontended)),
    },
    vsPlainTask: {
      burst: ratio(samples.burst, samples.plainBurst),
      uncontended: ratio(samples.uncontended, samples.plainUncontended),
    },
    burstCalls,
    uncontendedCalls,
    keys,
    rounds,
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** Nanoseconds per call of one run: every call issued, every promise settled. */
async function timed(
  spec: StrategySpec,
  calls: number,
  keys: number,
  shape: 'burst' | 'uncontended',
): Promise<number> {
  const prepared = prepareStrategy(spec)
  const runtime = createRuntime({ plugins: [installCoordination] })
  const bind = (call: number): TaskFn<number> =>
    prepared.coordinator === undefined
      ? body(call)
      : withCoordinator(body(call), prepared.coordinator, { key: ['cost', call % keys] })
  const started = process.hrtime.bigint()
  if (shape === 'burst') {
    const promises: Promise<unknown>[] = []
    for (let call = 0; call < calls; call++) promises.push(run(runtime, bind(call)).promise)
    await Promise.allSettled(promises)
  } else {
    for (let call = 0; call < calls; call++) {
      await run(runtime, bind(call)).promise.catch(() => undefined)
    }
  }
  const elapsed = Number(process.hrtime.bigint() - started)
  prepared.dispose()
  await shutdown(runtime, { mode: 'cancel', deadline: 1_000 })
  return elapsed / calls
}
