const POSTGRES_UNAVAILABLE = Symbol.for('@vega/job-postgres/PostgresUnavailableError')

/**
 * Postgres could not answer within `connectTimeoutMs`: it is stopped,
 * restarting, unreachable, or the pool had no free connection (the app
 * exhausted it). The call ends in `error` with it; nothing is left behind in
 * local state, and later calls try again.
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
export class PostgresUnavailableError extends Error {
  override readonly name = 'PostgresUnavailableError'
  /** What the package was doing: `acquire`, `renew`, `release`, `assertLease`, … */
  readonly operation: string

  constructor(message: string, operation: string, options?: ErrorOptions) {
    super(message, options)
    this.operation = operation
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
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { [key: symbol]: unknown })[POSTGRES_UNAVAILABLE] === true
  )
}
