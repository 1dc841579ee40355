import { type Codec, jsonCodec } from './codec.js'
import { checkLeaderContext, type LeaderContext } from './leader-context.js'

/**
 * The options every engine's factory takes besides its client and namespace,
 * as the user passed them.
 *
 * @example
 * ```ts
 * const given: CommonCoordinationOptions = { leaseMs: 10_000 }
 * ```
 */
export interface CommonCoordinationOptions {
  readonly leaseMs?: unknown
  readonly codec?: unknown
  readonly connectTimeoutMs?: unknown
  readonly leaderContext?: unknown
}

/**
 * Those options checked, with their defaults.
 *
 * @example
 * ```ts
 * const { leaseMs, connectTimeoutMs } = resolveCoordinationOptions('createPostgresCoordination', options)
 * ```
 */
export interface ResolvedCoordinationOptions {
  readonly leaseMs: number
  readonly codec: Codec
  /** Default min(leaseMs, 5000). */
  readonly connectTimeoutMs: number
  readonly leaderContext: LeaderContext | undefined
}

/**
 * A value as an option error names it: `'text'`, `an object (Pool)`, `5`.
 *
 * @example
 * ```ts
 * describeValue('vj') // "'vj'"
 * ```
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`
  if (typeof value === 'function') return 'a function'
  if (typeof value === 'object' && value !== null)
    return `an object (${value.constructor?.name ?? 'Object'})`
  return String(value)
}

/**
 * The `codec` option checked, `jsonCodec` when it is undefined: a
 * `TypeError` naming the value otherwise.
 *
 * @example
 * ```ts
 * const codec = checkCodec('createRedisAggregateBus(options)', options.codec)
 * ```
 */
export function checkCodec(where: string, value: unknown): Codec {
  const codec = (value ?? jsonCodec) as Codec
  if (
    codec === null ||
    typeof codec !== 'object' ||
    typeof codec.encode !== 'function' ||
    typeof codec.decode !== 'function'
  ) {
    throw new TypeError(
      `${where}: codec must be { encode(value): string, decode(text): unknown }, got ${describeValue(codec)}.`,
    )
  }
  return codec
}

/**
 * Checks the options every engine shares (`leaseMs`, `codec`,
 * `connectTimeoutMs`, `leaderContext`): a `TypeError` or `RangeError` naming
 * the option and the value, under the factory's name.
 *
 * @example
 * ```ts
 * const resolved = resolveCoordinationOptions('createPostgresCoordination', options)
 * ```
 */
export function resolveCoordinationOptions(
  factory: string,
  options: CommonCoordinationOptions,
): ResolvedCoordinationOptions {
  const where = `${factory}(options)`
  const { leaseMs } = options
  if (typeof leaseMs !== 'number' || !Number.isInteger(leaseMs) || leaseMs < 10) {
    throw new RangeError(
      `${where}: leaseMs must be an integer ≥ 10 (milliseconds a grant holds without renewal), got ${describeValue(leaseMs)}.`,
    )
  }
  const codec = checkCodec(where, options.codec)
  const connectTimeoutMs = options.connectTimeoutMs ?? Math.min(leaseMs, 5000)
  if (
    typeof connectTimeoutMs !== 'number' ||
    !Number.isInteger(connectTimeoutMs) ||
    connectTimeoutMs < 1
  ) {
    throw new RangeError(
      `${where}: connectTimeoutMs must be a positive integer (ms), got ${describeValue(connectTimeoutMs)}.`,
    )
  }
  const leaderContext = checkLeaderContext(options.leaderContext, factory)
  return { leaseMs, codec, connectTimeoutMs, leaderContext }
}
