/**
 * Checks a lane or group count. Reactor and Wow reject a non-positive count;
 * a fractional one would make `toGroupKey` disagree with a JVM, so it is
 * refused too.
 */
export function requirePositiveInteger(value: unknown, where: string, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new RangeError(
      `${where}: ${what} must be a positive integer, got ${describe(value)}. ` +
        `Pass a whole number ≥ 1 (for example 4), or omit it for the default.`,
    )
  }
  return value
}

export function requireName(value: unknown, where: string, what = 'name'): string {
  if (typeof value !== 'string' || value === '') {
    throw new TypeError(
      `${where}: ${what} must be a non-empty string, got ${describe(value)}. ` +
        'It labels schedulers, errors and stats.',
    )
  }
  return value
}

export function requireFunction(value: unknown, where: string, what: string): void {
  if (typeof value !== 'function') {
    throw new TypeError(`${where}: ${what} must be a function, got ${describe(value)}.`)
  }
}

export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return String(value)
  }
  if (value === null) return 'null'
  if (value === undefined) return 'undefined'
  return typeof value
}
