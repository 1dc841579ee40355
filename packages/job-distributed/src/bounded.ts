/**
 * Who hears the end of one bounded round trip: exactly one of `answered` /
 * `failed`, and `late` for a success that came after the timeout. The hot
 * path (a grant, a release) hands its waiter or lease itself, so a call
 * allocates no promise and waits no extra microtask for it.
 *
 * @example
 * ```ts
 * const to: Answer<number> = { answered: (n) => console.log(n), failed: (e) => console.error(e) }
 * ```
 */
export interface Answer<T> {
  answered(value: T): void
  failed(error: unknown): void
  late?(value: T): void
}

/**
 * Makes an engine's "unavailable" error (`RedisUnavailableError`,
 * `PostgresUnavailableError`) for an operation that timed out (`cause`
 * undefined) or failed (`cause` set).
 *
 * @example
 * ```ts
 * const unavailable: Unavailable = (message, operation, cause) =>
 *   new Error(`${operation}: ${message}`, { cause })
 * ```
 */
export type Unavailable = (message: string, operation: string, cause?: unknown) => Error

/**
 * Runs one round trip to an engine's storage and tells `to` how it ended,
 * within `ms`: a step that does not settle in time fails with the engine's
 * unavailable error (a silent partition never hangs the caller), one that
 * fails is wrapped in it, and a success after the timeout goes to `to.late`
 * (to undo what nobody waits for). The timer never keeps the process alive.
 *
 * @example
 * ```ts
 * boundedTo('acquire', 5000, () => pool.query('SELECT 1'), to, unavailable, 'Postgres')
 * ```
 */
export function boundedTo<T>(
  operation: string,
  ms: number,
  step: () => Promise<T>,
  to: Answer<T>,
  unavailable: Unavailable,
  /** What the storage is called in messages: `Redis`, `Postgres`. */
  storage: string,
): void {
  let timedOut = false
  let settled = false
  const expire = () => {
    if (settled) return
    timedOut = true
    to.failed(
      unavailable(
        `${storage} did not answer within connectTimeoutMs (${ms} ms); it is stopped, paused or unreachable.`,
        operation,
      ),
    )
  }
  // After a stalled event loop, timers run before the socket is read: the
  // verdict waits for the poll phase, so a reply already received still counts.
  const timer = setTimeout(() => setImmediate(expire), ms)
  timer.unref()
  let started: Promise<T>
  try {
    started = step()
  } catch (error) {
    started = Promise.reject(error)
  }
  started.then(
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
        unavailable(
          `${storage} failed: ${error instanceof Error ? error.message : String(error)}`,
          operation,
          error,
        ),
      )
    },
  )
}

/**
 * {@link boundedTo} as a promise, for the round trips off the hot path.
 *
 * @example
 * ```ts
 * const rows = await bounded('sweep', 5000, () => pool.query(sql), unavailable, 'Postgres')
 * ```
 */
export function bounded<T>(
  operation: string,
  ms: number,
  step: () => Promise<T>,
  unavailable: Unavailable,
  storage: string,
  late?: (value: T) => void,
): Promise<T> {
  return new Promise<T>((answered, failed) => {
    boundedTo(
      operation,
      ms,
      step,
      late === undefined ? { answered, failed } : { answered, failed, late },
      unavailable,
      storage,
    )
  })
}
