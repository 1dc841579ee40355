import { noop } from './noop.js'

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
