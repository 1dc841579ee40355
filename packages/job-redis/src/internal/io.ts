import { type RoundTrips, roundTrips } from '@vega/job-distributed'
import { RedisUnavailableError } from '../errors.js'

/**
 * Redis's round trips, each within `connectTimeoutMs`: one that does not
 * settle in time, or fails, ends in `RedisUnavailableError`.
 */
export const io: RoundTrips = roundTrips({
  engine: '@vega/job-redis',
  storage: 'Redis',
  error: RedisUnavailableError,
})
