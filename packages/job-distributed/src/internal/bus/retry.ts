/**
 * The retry policy of a consumer, resolved once from `consume(…, { retry })`
 * ({@link resolveRetry}).
 *
 * @example
 * ```ts
 * const retry: ResolvedRetry = resolveConsumeOptions('bus.consume', { retry: 5 }, []).retry
 * ```
 */
export interface ResolvedRetry {
  readonly attempts: number
  /**
   * ms before the next attempt. Throws `RangeError` for a negative, `NaN` or
   * infinite delay (as `@vega/job-core` fails a task for it): the message
   * then goes to the dead letters with that error.
   */
  delay(attempt: number, error: unknown): number
  retryIf(error: unknown, attempt: number): boolean
}

/** Exponential with full jitter: up to 100, 200, 400 … ms, capped at 30 s (as @vega/job-core). */
export function defaultDelay(attempt: number): number {
  return Math.floor(Math.random() * Math.min(30_000, 100 * 2 ** (attempt - 1)))
}

export function resolveRetry(
  attempts: number,
  delay: number | ((attempt: number, error: unknown) => number) | undefined,
  retryIf: ((error: unknown, attempt: number) => boolean) | undefined,
): ResolvedRetry {
  const delayOf =
    delay === undefined ? defaultDelay : typeof delay === 'number' ? () => delay : delay
  return {
    attempts,
    delay(attempt, error) {
      const ms = delayOf(attempt, error)
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
        throw new RangeError(
          `retry.delay(attempt, error) must return a finite number of ms ≥ 0, got ${String(ms)} for attempt ${attempt}.`,
        )
      }
      return ms
    },
    retryIf: retryIf ?? (() => true),
  }
}
