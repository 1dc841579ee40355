import { RedisUnavailableError } from '../errors.js'

/**
 * Who hears the end of one bounded round trip: exactly one of `answered` /
 * `failed`, and `late` for a success that came after the timeout. The hot
 * path (a grant, a release) hands its waiter or lease itself, so a call
 * allocates no promise and waits no extra microtask for it.
 */
export interface Answer<T> {
  answered(value: T): void
  failed(error: unknown): void
  late?(value: T): void
}

/**
 * Runs one Redis round trip and tells `to` how it ended, within `ms`: a step
 * that does not settle in time fails with `RedisUnavailableError` (a silent
 * partition never hangs the caller), one that fails is wrapped in it, and a
 * success after the timeout goes to `to.late` (to undo what nobody waits for).
 * The timer never keeps the process alive: the connection does, while a
 * command is on it.
 */
export function boundedTo<T>(
  operation: string,
  ms: number,
  step: () => Promise<T>,
  to: Answer<T>,
): void {
  let timedOut = false
  let settled = false
  const expire = () => {
    if (settled) return
    timedOut = true
    to.failed(
      new RedisUnavailableError(
        `@vega/job-redis ${operation}: Redis did not answer within connectTimeoutMs (${ms} ms); it is stopped, paused or unreachable.`,
        operation,
      ),
    )
  }
  // After a stalled event loop, timers run before the socket is read: the
  // verdict waits for the poll phase, so a reply already received still counts.
  const timer = setTimeout(() => setImmediate(expire), ms)
  timer.unref()
  step().then(
    (value) => {
      settled = true
      clearTimeout(timer)
      if (!timedOut) to.answered(value)
      else to.late?.(value)
    },
    (error: unknown) => {
      settled = true
      clearTimeout(timer)
      if (timedOut) return
      to.failed(
        new RedisUnavailableError(
          `@vega/job-redis ${operation}: Redis failed: ${error instanceof Error ? error.message : String(error)}`,
          operation,
          { cause: error },
        ),
      )
    },
  )
}

/**
 * {@link boundedTo} as a promise, for the round trips off the hot path: it
 * rejects with `RedisUnavailableError` when Redis does not answer in time or
 * fails; `late` hears a success that came after the timeout.
 */
export function bounded<T>(
  operation: string,
  ms: number,
  step: () => Promise<T>,
  late?: (value: T) => void,
): Promise<T> {
  return new Promise<T>((answered, failed) => {
    boundedTo(
      operation,
      ms,
      step,
      late === undefined ? { answered, failed } : { answered, failed, late },
    )
  })
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
