import { bounded as boundedStep } from '@vega/job-distributed'
import { PostgresUnavailableError } from '../../errors.js'

const unavailable = (message: string, operation: string, cause?: unknown): Error =>
  new PostgresUnavailableError(
    `@vega/job-postgres bus ${operation}: ${message}`,
    operation,
    cause === undefined ? undefined : { cause },
  )

/**
 * One round trip of the bus, within `ms`: it rejects with
 * `PostgresUnavailableError` when Postgres fails or does not answer in
 * time; `late` hears a success that came after the bound.
 */
export function bounded<T>(
  operation: string,
  ms: number,
  step: () => Promise<T>,
  late?: (value: T) => void,
): Promise<T> {
  return boundedStep(operation, ms, step, unavailable, 'Postgres', late)
}
