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

/**
 * An engine's own "unavailable" error class, made as
 * `new (message, operation, { cause })`.
 *
 * @example
 * ```ts
 * const made: UnavailableErrorClass = StorageUnavailableError
 * ```
 */
export type UnavailableErrorClass = new (
  message: string,
  operation: string,
  options?: ErrorOptions,
) => Error

/**
 * {@link boundedTo} and {@link bounded} bound to one engine: its error class,
 * the package name its messages start with, and what its storage is called.
 *
 * @example
 * ```ts
 * const io: RoundTrips = roundTrips({ engine: '@my/engine', storage: 'MyDB', error: StorageUnavailableError })
 * ```
 */
export interface RoundTrips {
  /** Makes the engine's error: `<engine> <operation>: <message>`, with `cause` when given. */
  readonly unavailable: Unavailable
  /** {@link boundedTo} with the engine's error. */
  boundedTo<T>(operation: string, ms: number, step: () => Promise<T>, to: Answer<T>): void
  /** {@link bounded} with the engine's error. */
  bounded<T>(
    operation: string,
    ms: number,
    step: () => Promise<T>,
    late?: (value: T) => void,
  ): Promise<T>
}

/**
 * Binds the bounded round trips to one engine, so every round trip of it
 * fails with its own error class and its name first in the message.
 *
 * @example
 * ```ts
 * import { roundTrips, StorageUnavailableError } from '@vega/job-distributed'
 *
 * class MyDbUnavailableError extends StorageUnavailableError {
 *   override readonly name = 'MyDbUnavailableError'
 * }
 * const { bounded } = roundTrips({ engine: '@my/engine', storage: 'MyDB', error: MyDbUnavailableError })
 * const rows = await bounded('sweep', 5000, () => db.query('SELECT 1'))
 * ```
 */
export function roundTrips(engine: {
  /** The package, first in every message: `@vega/job-redis`. */
  readonly engine: string
  /** What the storage is called in messages: `Redis`, `Postgres`. */
  readonly storage: string
  readonly error: UnavailableErrorClass
}): RoundTrips {
  const { storage, error: UnavailableError } = engine
  const unavailable: Unavailable = (message, operation, cause) =>
    new UnavailableError(
      `${engine.engine} ${operation}: ${message}`,
      operation,
      cause === undefined ? undefined : { cause },
    )
  return {
    unavailable,
    boundedTo: (operation, ms, step, to) =>
      boundedTo(operation, ms, step, to, unavailable, storage),
    bounded: (operation, ms, step, late) =>
      bounded(operation, ms, step, unavailable, storage, late),
  }
}
