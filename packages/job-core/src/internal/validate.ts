/** Checks a concurrency limit: a positive integer or `Infinity`. */
export function validateConcurrency(value: number | undefined, where: string): number {
  if (value === undefined) return Number.POSITIVE_INFINITY
  if (
    typeof value !== 'number' ||
    Number.isNaN(value) ||
    value < 1 ||
    (!Number.isInteger(value) && value !== Number.POSITIVE_INFINITY)
  ) {
    throw new RangeError(
      `${where}: concurrency must be a positive integer or Infinity, got ${String(value)}. ` +
        'Use 1 to run one task at a time.',
    )
  }
  return value
}

/** Checks a duration in ms: a finite number ≥ 0. */
export function validateMs(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new RangeError(
      `${what} must be a finite number of milliseconds ≥ 0, got ${String(value)}.`,
    )
  }
  return value
}
