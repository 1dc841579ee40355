import { type RoundTrips, roundTrips } from '@vega/job-distributed'
import { PostgresUnavailableError } from '../errors.js'

/**
 * Postgres's round trips, each within `connectTimeoutMs`: one that does not
 * settle in time (a server that does not answer, a pool with no free
 * connection), or fails, ends in `PostgresUnavailableError`.
 */
export const io: RoundTrips = roundTrips({
  engine: '@vega/job-postgres',
  storage: 'Postgres',
  error: PostgresUnavailableError,
})
