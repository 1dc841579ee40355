/** The retry policy of a consumer, resolved once from `consume(…, { retry })`. */
export interface ResolvedRetry {
  readonly attempts: number
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
      // A bad computed delay must not stall a partition: treat it as no wait.
      return Number.isFinite(ms) && ms > 0 ? ms : 0
    },
    retryIf: retryIf ?? (() => true),
  }
}
