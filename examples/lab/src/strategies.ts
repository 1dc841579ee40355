import {
  type Coordinator,
  createSerializeCoordinator,
  dedupeCoordinator,
  defineCoordinator,
  exhaustCoordinator,
  keepLatestCoordinator,
  restartCoordinator,
} from '@vega/job-coordination'

/** The strategies the lab knows: plain `run()`, the five built-in coordinators, two hand-written ones. */
export const STRATEGY_NAMES = [
  'none',
  'dedupe',
  'restart',
  'serialize',
  'exhaust',
  'keepLatest',
  'bounded',
  'forgetful',
] as const

export type StrategyName = (typeof STRATEGY_NAMES)[number]

/** Plain `run()` and the built-in coordinators of `@vega/job-coordination`. */
export const BUILT_IN_STRATEGIES: readonly StrategyName[] = [
  'none',
  'dedupe',
  'restart',
  'serialize',
  'exhaust',
  'keepLatest',
]

/** The two coordinators written in the lab with `defineCoordinator`. */
export const CUSTOM_STRATEGIES: readonly StrategyName[] = ['bounded', 'forgetful']

/** A strategy to run: its name and, for `bounded`, the limit. */
export interface StrategySpec {
  readonly name: StrategyName
  /** Only for `bounded`: how many bodies may be in flight per key. */
  readonly limit?: number
}

/** What a scenario binds its calls with; `dispose` ends stateful coordinators. */
export interface PreparedStrategy {
  /** `undefined` for `none`: the calls go through plain `run()`. */
  readonly coordinator: Coordinator | undefined
  readonly dispose: () => void
}

/**
 * Hand-written: caps the bodies in flight per key. While fewer than `limit` peers
 * are in flight, proceed; otherwise reuse the earliest peer (its promise, so
 * the caller gets its value). `bounded(1)` behaves exactly like dedupe.
 */
export function bounded(limit: number) {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`bounded(limit): limit must be an integer ≥ 1, got ${limit}.`)
  }
  return defineCoordinator('bounded', (ctx) => {
    const peers = ctx.peers()
    const earliest = peers[0]
    return peers.length < limit || earliest === undefined ? ctx.proceed() : ctx.reuse(earliest)
  })
}

/**
 * Hand-written: decides nothing, on purpose. The orphan guard catches every
 * intent: `coordination:orphaned-intent`, the task ends `cancelled` /
 * `orphaned-intent`, and the caller receives what the coordinator returned
 * (`undefined`).
 */
export const forgetful: Coordinator = defineCoordinator('forgetful', () => undefined)

/**
 * Makes the coordinator for one scenario run. Serialize is stateful, so each
 * run gets its own queue and disposes of it afterwards.
 */
export function prepareStrategy(spec: StrategySpec): PreparedStrategy {
  const none = () => {}
  switch (spec.name) {
    case 'none':
      return { coordinator: undefined, dispose: none }
    case 'dedupe':
      return { coordinator: dedupeCoordinator, dispose: none }
    case 'restart':
      return { coordinator: restartCoordinator, dispose: none }
    case 'serialize': {
      const serialize = createSerializeCoordinator()
      return { coordinator: serialize.coordinator, dispose: serialize.dispose }
    }
    case 'exhaust':
      return { coordinator: exhaustCoordinator, dispose: none }
    case 'keepLatest':
      return { coordinator: keepLatestCoordinator, dispose: none }
    case 'bounded':
      return { coordinator: bounded(spec.limit ?? DEFAULT_LIMIT), dispose: none }
    case 'forgetful':
      return { coordinator: forgetful, dispose: none }
  }
}

/** `bounded`'s limit when none is given: the facts table's `bounded(2)`. */
export const DEFAULT_LIMIT = 2

/** `bounded(2)`, `dedupe`, … as people write it. */
export function strategyLabel(spec: StrategySpec): string {
  return spec.name === 'bounded' ? `bounded(${spec.limit ?? DEFAULT_LIMIT})` : spec.name
}

export function isStrategyName(value: string): value is StrategyName {
  return (STRATEGY_NAMES as readonly string[]).includes(value)
}
