import { describeValue } from './internal/describe-value.js'
import type { Coordinator, CoordinatorImpl } from './types.js'

// Symbol.for: a coordinator made by one copy of this package is still
// recognised by another (a bundled copy next to an installed one).
const BRAND = Symbol.for('@vega/job-coordination/coordinator')

/**
 * Makes a coordinator: a named decision function for repeated calls with the
 * same key. `impl(ctx)` runs once per call (the intent), synchronously inside
 * `run()`, and must decide exactly once: `ctx.proceed()`, `ctx.reuse(peer)`
 * or `ctx.intent.skip(reason)`. What it returns is what the caller receives.
 *
 * The runtime enforces the protocol: a second decision throws
 * `CoordinationProtocolError`; if the returned value settles while the intent
 * is undecided, the orphan guard emits `coordination:orphaned-intent` and
 * skips it (`orphaned-intent`); if `impl` throws (or its promise rejects)
 * while undecided, the intent ends `error` with that error.
 *
 * Throws `TypeError` for an empty name or a non-function `impl`.
 *
 * @example
 * ```ts
 * // at most `limit` bodies per key; later calls share the earliest result
 * const bounded = (limit: number) =>
 *   defineCoordinator('bounded', (ctx) => {
 *     const peers = ctx.peers()
 *     return peers.length < limit ? ctx.proceed() : ctx.reuse(peers[0]!)
 *   })
 * ```
 */
export function defineCoordinator(name: string, impl: CoordinatorImpl): Coordinator {
  return makeCoordinator(name, impl)
}

/** `defineCoordinator`, with more members; a built-in's is made by `defineStrategy` (`internal/strategy.ts`). */
export function makeCoordinator<C extends Coordinator = Coordinator>(
  name: string,
  impl: CoordinatorImpl,
  /** More members (a stateful coordinator's lifecycle), set before the object is frozen. */
  members?: PropertyDescriptorMap,
): C {
  if (typeof name !== 'string' || name.trim() === '') {
    throw new TypeError(
      `defineCoordinator(name, impl): name must be a non-empty string, got ${describeValue(name)}; it labels every diagnostic event the coordinator causes.`,
    )
  }
  if (typeof impl !== 'function') {
    throw new TypeError(
      `defineCoordinator('${name}', impl): impl must be a function (ctx) => ctx.proceed() | ctx.reuse(peer) | ctx.intent.skip(reason), got ${describeValue(impl)}.`,
    )
  }
  const coordinator: Coordinator = { name, coordinate: impl }
  Object.defineProperty(coordinator, BRAND, { value: true })
  if (members !== undefined) Object.defineProperties(coordinator, members)
  return Object.freeze(coordinator) as C
}

/**
 * Whether `value` is a coordinator made by `defineCoordinator` (or a
 * built-in), from any copy of this package.
 *
 * @example
 * ```ts
 * isCoordinator(dedupeCoordinator) // true
 * isCoordinator(createSerializeCoordinator()) // true: a stateful coordinator is one
 * ```
 */
export function isCoordinator(value: unknown): value is Coordinator {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { [BRAND]?: unknown })[BRAND] === true &&
    typeof (value as Coordinator).coordinate === 'function'
  )
}
