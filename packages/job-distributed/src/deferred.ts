/**
 * A promise with its resolve and reject, for whoever settles it later (a
 * batch's acknowledgement, a release's answer).
 *
 * @example
 * ```ts
 * const acked: Deferred<boolean> = deferred()
 * acked.resolve(true)
 * ```
 */
export interface Deferred<T> {
  readonly promise: Promise<T>
  resolve(value: T | PromiseLike<T>): void
  reject(error: unknown): void
}

/**
 * Makes a {@link Deferred}: the one helper both engines and this package
 * settle their promises with.
 *
 * @example
 * ```ts
 * const verdict = deferred<'acked' | 'refused'>()
 * setImmediate(() => verdict.resolve('acked'))
 * await verdict.promise
 * ```
 */
export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T | PromiseLike<T>) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}
