/**
 * A value as an error message shows it: strings quoted (so `'3'` and `3`
 * read differently), objects by their kind, everything else as written.
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`
  if (typeof value === 'function') return 'a function'
  if (Array.isArray(value)) return 'an array'
  if (value !== null && typeof value === 'object') {
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name
    return typeof name === 'string' && name !== 'Object' ? `a ${name}` : 'an object'
  }
  return String(value)
}

/** Names an option in errors: `where()` is the option itself, `where('delay')` one of its fields. */
export type OptionName = (field?: string) => string

/**
 * The name of `option` and of its fields inside the call that takes it:
 * `wrap` puts `retry` or `retry: { delay }` in place, as in
 * `run(…, { retry: { delay } })`.
 */
export function nestedOptionName(wrap: (inner: string) => string, option: string): OptionName {
  return (field) => wrap(field === undefined ? option : `${option}: { ${field} }`)
}

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
      `${where}: concurrency must be a positive integer or Infinity, got ${describeValue(value)}. ` +
        'Use 1 to run one task at a time.',
    )
  }
  return value
}

/** Checks a duration in ms: a finite number ≥ 0. */
export function validateMs(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new RangeError(
      `${what} must be a finite number of milliseconds ≥ 0, got ${describeValue(value)}.`,
    )
  }
  return value
}
