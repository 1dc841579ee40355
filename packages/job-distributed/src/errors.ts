// Each class carries a brand under a global symbol, so its guard also knows
// an error made by another copy of this package (ESM and CJS both loaded).
const LEASE_LOST = Symbol.for('@vega/job-distributed/LeaseLostError')
const REMOTE_TASK = Symbol.for('@vega/job-distributed/RemoteTaskError')
const STORAGE_UNAVAILABLE = Symbol.for('@vega/job-distributed/StorageUnavailableError')

/**
 * Whether `error` carries `brand`, a global symbol (`Symbol.for`) its class
 * sets on each instance: unlike `instanceof`, it also knows an error made by
 * another copy of the class's package (ESM and CJS both loaded, or two
 * versions side by side).
 *
 * @example
 * ```ts
 * const BRAND = Symbol.for('@my/engine/MyError')
 * if (hasBrand(error, BRAND)) console.warn('my engine failed')
 * ```
 */
export function hasBrand(error: unknown, brand: symbol): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { [key: symbol]: unknown })[brand] === true
  )
}

/**
 * The call lost its lease: a renewal failed (the lease expired, someone else
 * holds the key now, or the engine's storage could not be reached to renew
 * it), or `assertLease(ctx)` found the token no longer current. The body's
 * signal is aborted with this error and the task ends in `error` with it;
 * whatever the body returns later reaches no one. Both engines
 * (`@vega/job-redis`, `@vega/job-postgres`) throw this one class.
 *
 * @example
 * ```ts
 * const outcome = await settle(task)
 * if (outcome.status === 'error' && outcome.error instanceof LeaseLostError) {
 *   console.warn(`lost ${outcome.error.key} at fence ${outcome.error.fence}`)
 * }
 * ```
 */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError'
  /** The hash of the coordinated key. */
  readonly key: string
  /** The fencing token the call held, or `undefined` if it was never granted. */
  readonly fence: number | undefined

  constructor(message: string, key: string, fence: number | undefined, options?: ErrorOptions) {
    super(message, options)
    this.key = key
    this.fence = fence
    Object.defineProperty(this, LEASE_LOST, { value: true })
  }
}

/**
 * Whether `error` is a {@link LeaseLostError}, also one made by another copy
 * of this package (where `instanceof` says no).
 *
 * @example
 * ```ts
 * const outcome = await settle(task)
 * if (outcome.status === 'error' && isLeaseLostError(outcome.error)) console.warn(outcome.error.key)
 * ```
 */
export function isLeaseLostError(error: unknown): error is LeaseLostError {
  return hasBrand(error, LEASE_LOST)
}

/**
 * A dedupe follower in one process receives this when the leader's body, run
 * in another process, failed, or returned a value the codec could not encode.
 * `remoteName` and `message` are the leader's error's.
 *
 * @example
 * ```ts
 * const result = await settle(task)
 * if (result.status === 'error' && result.error instanceof RemoteTaskError) {
 *   console.log(result.error.remoteName, result.error.message)
 * }
 * ```
 */
export class RemoteTaskError extends Error {
  override readonly name = 'RemoteTaskError'
  /** The `name` of the error the leader's body threw (`CodecError` when its value could not be encoded). */
  readonly remoteName: string

  constructor(message: string, remoteName: string) {
    super(message)
    this.remoteName = remoteName
    Object.defineProperty(this, REMOTE_TASK, { value: true })
  }
}

/**
 * Whether `error` is a {@link RemoteTaskError}, also one made by another copy
 * of this package.
 *
 * @example
 * ```ts
 * const result = await settle(task)
 * if (result.status === 'error' && isRemoteTaskError(result.error)) console.log(result.error.remoteName)
 * ```
 */
export function isRemoteTaskError(error: unknown): error is RemoteTaskError {
  return hasBrand(error, REMOTE_TASK)
}

/**
 * An engine's storage could not answer within `connectTimeoutMs`: the base
 * of every engine's own error (`RedisUnavailableError`,
 * `PostgresUnavailableError`), so code that runs on either engine can catch
 * both with one check. The call ends in `error` with it; nothing is left
 * behind in local state, and later calls try again.
 *
 * @example
 * ```ts
 * try {
 *   await run(runtime, save)
 * } catch (error) {
 *   if (error instanceof StorageUnavailableError) return retryLater(error.operation)
 *   throw error
 * }
 * ```
 */
export class StorageUnavailableError extends Error {
  override readonly name: string = 'StorageUnavailableError'
  /** What the engine was doing: `acquire`, `renew`, `release`, `assertLease`, `tick`, … */
  readonly operation: string

  constructor(message: string, operation: string, options?: ErrorOptions) {
    super(message, options)
    this.operation = operation
    Object.defineProperty(this, STORAGE_UNAVAILABLE, { value: true })
  }
}

/**
 * Whether `error` is a {@link StorageUnavailableError} (of any engine), also
 * one made by another copy of this package.
 *
 * @example
 * ```ts
 * if (isStorageUnavailableError(error)) console.warn(`storage unavailable during ${error.operation}`)
 * ```
 */
export function isStorageUnavailableError(error: unknown): error is StorageUnavailableError {
  return hasBrand(error, STORAGE_UNAVAILABLE)
}
