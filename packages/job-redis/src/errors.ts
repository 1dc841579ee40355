// LeaseLostError and RemoteTaskError are every engine's: @vega/job-distributed's.
// RedisUnavailableError carries a brand under a global symbol, so its guard
// also knows an error made by another copy of this package (ESM and CJS both
// loaded).
export {
  isLeaseLostError,
  isRemoteTaskError,
  LeaseLostError,
  RemoteTaskError,
} from '@vega/job-distributed'

const REDIS_UNAVAILABLE = Symbol.for('@vega/job-redis/RedisUnavailableError')

function hasBrand(error: unknown, brand: symbol): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { [key: symbol]: unknown })[brand] === true
  )
}

/**
 * Redis could not be reached within `connectTimeoutMs` (stopped, paused,
 * partitioned, or the client was closed). The call ends in `error` with it;
 * nothing is left behind in local state, and later calls try again.
 *
 * @example
 * ```ts
 * try {
 *   await run(runtime, save)
 * } catch (error) {
 *   if (error instanceof RedisUnavailableError) return retryLater()
 *   throw error
 * }
 * ```
 */
export class RedisUnavailableError extends Error {
  override readonly name = 'RedisUnavailableError'
  /** What the package was doing: `acquire`, `renew`, `release`, `assertLease`, … */
  readonly operation: string

  constructor(message: string, operation: string, options?: ErrorOptions) {
    super(message, options)
    this.operation = operation
    Object.defineProperty(this, REDIS_UNAVAILABLE, { value: true })
  }
}

/**
 * Whether `error` is a {@link RedisUnavailableError}, also one made by
 * another copy of this package.
 *
 * @example
 * ```ts
 * try {
 *   await run(runtime, save)
 * } catch (error) {
 *   if (isRedisUnavailableError(error)) return retryLater(error.operation)
 *   throw error
 * }
 * ```
 */
export function isRedisUnavailableError(error: unknown): error is RedisUnavailableError {
  return hasBrand(error, REDIS_UNAVAILABLE)
}
