import { RedisUnavailableError } from '../../errors.js'

/**
 * A round trip the caller waits for, bounded by `ms`: it rejects with
 * `RedisUnavailableError` when Redis does not answer in time or fails.
 */
export function bounded<T>(operation: string, ms: number, step: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(
        new RedisUnavailableError(
          `@vega/job-redis ${operation}: Redis did not answer within connectTimeoutMs (${ms} ms); it is stopped, paused or unreachable.`,
          operation,
        ),
      )
    }, ms)
    step().then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(
          new RedisUnavailableError(
            `@vega/job-redis ${operation}: Redis failed: ${error instanceof Error ? error.message : String(error)}`,
            operation,
            { cause: error },
          ),
        )
      },
    )
  })
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}
