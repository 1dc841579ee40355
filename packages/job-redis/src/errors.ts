// LeaseLostError and RemoteTaskError are every engine's: @vega/job-distributed's.
// RedisUnavailableError extends its StorageUnavailableError, and carries its
// own brand under a global symbol too, so its guard also knows an error made
// by another copy of this package (ESM and CJS both loaded, or two versions side by side).
import { hasBrand, StorageUnavailableError } from '@vega/job-distributed'

export {
  isLeaseLostError,
  isRemoteTaskError,
  LeaseLostError,
  RemoteTaskError,
} from '@vega/job-distributed'

const REDIS_UNAVAILABLE = Symbol.for('@vega/job-redis/RedisUnavailableError')

/**
 * Redis could not be reached within `connectTimeoutMs` (stopped, paused,
 * partitioned, or the client was closed). The call ends in `error` with it;
 * nothing is left behind in local state, and later calls try again. A
 * `StorageUnavailableError` (from `@vega/job-distributed`) too, as
 * `PostgresUnavailableError` is: `operation` says what the package was doing
 * (`acquire`, `renew`, `release`, `assertLease`, `tick`, …).
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
export class RedisUnavailableError extends StorageUnavailableError {
  override readonly name = 'RedisUnavailableError'

  constructor(message: string, operation: string, options?: ErrorOptions) {
    super(message, operation, options)
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
