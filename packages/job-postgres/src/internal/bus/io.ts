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

/**
 * Resolves after `ms`, or at once when `signal` aborts. Its timer never keeps
 * the process alive: what waits on it (a retry delay, a back-off) belongs to
 * a consumer whose own connection or handlers do.
 */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    timer.unref()
    signal?.addEventListener('abort', done, { once: true })
  })
}
