import { hasBrand, StorageUnavailableError } from '@vega/job-distributed'

const POSTGRES_UNAVAILABLE = Symbol.for('@vega/job-postgres/PostgresUnavailableError')

/**
 * Postgres could not answer within `connectTimeoutMs`: it is stopped,
 * restarting, unreachable, or the pool had no free connection (the app
 * exhausted it). The call ends in `error` with it; nothing is left behind in
 * local state, and later calls try again. A `StorageUnavailableError` (from
 * `@vega/job-distributed`) too, as `RedisUnavailableError` is: `operation`
 * says what the package was doing (`acquire`, `renew`, `release`,
 * `assertLease`, `tick`, …).
 *
 * @example
 * ```ts
 * try {
 *   await run(runtime, save)
 * } catch (error) {
 *   if (error instanceof PostgresUnavailableError) return retryLater(error.operation)
 *   throw error
 * }
 * ```
 */
export class PostgresUnavailableError extends StorageUnavailableError {
  override readonly name = 'PostgresUnavailableError'

  constructor(message: string, operation: string, options?: ErrorOptions) {
    super(message, operation, options)
    Object.defineProperty(this, POSTGRES_UNAVAILABLE, { value: true })
  }
}

/**
 * Whether `error` is a {@link PostgresUnavailableError}, also one made by
 * another copy of this package.
 *
 * @example
 * ```ts
 * if (isPostgresUnavailableError(error)) console.warn(`Postgres unavailable during ${error.operation}`)
 * ```
 */
export function isPostgresUnavailableError(error: unknown): error is PostgresUnavailableError {
  return hasBrand(error, POSTGRES_UNAVAILABLE)
}
