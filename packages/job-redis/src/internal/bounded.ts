import {
  type Answer,
  bounded as distributedBounded,
  boundedTo as distributedBoundedTo,
} from '@vega/job-distributed'
import { RedisUnavailableError } from '../errors.js'

export type { Answer }

const unavailable = (message: string, operation: string, cause?: unknown) =>
  new RedisUnavailableError(
    `@vega/job-redis ${operation}: ${message}`,
    operation,
    cause === undefined ? undefined : { cause },
  )

/**
 * Runs one Redis round trip and tells `to` how it ended, within `ms`: a step
 * that does not settle in time, or fails, ends in `RedisUnavailableError`
 * (see @vega/job-distributed's boundedTo).
 */
export function boundedTo<T>(
  operation: string,
  ms: number,
  step: () => Promise<T>,
  to: Answer<T>,
): void {
  distributedBoundedTo(operation, ms, step, to, unavailable, 'Redis')
}

/** {@link boundedTo} as a promise, for the round trips off the hot path. */
export function bounded<T>(
  operation: string,
  ms: number,
  step: () => Promise<T>,
  late?: (value: T) => void,
): Promise<T> {
  return distributedBounded(operation, ms, step, unavailable, 'Redis', late)
}
