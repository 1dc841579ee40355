/** A promise with its resolvers, for results decided later (a shaper burst's survivor). */
export interface Deferred<T> {
  readonly promise: Promise<T>
  resolve(value: T): void
  reject(error: unknown): void
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  )
}

/** Marks a promise as handled so an unobserved rejection never reaches `unhandledRejection`. */
export function handled<P extends Promise<unknown>>(promise: P): P {
  promise.then(undefined, noop)
  return promise
}

export function noop(): void {}

/**
 * Resolves after the current macrotask: every promise callback queued so far
 * (and those they queue) has run by then. Not a timer: it does not wait for
 * time, so it stays outside the runtime clock.
 */
export function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => {
    if (typeof setImmediate === 'function') setImmediate(resolve)
    else setTimeout(resolve, 0)
  })
}
