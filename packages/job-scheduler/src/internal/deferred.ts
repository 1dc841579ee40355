export interface Deferred<T> {
  readonly promise: Promise<T>
  readonly settled: boolean
  resolve(value: T): void
  reject(error: unknown): void
}

/**
 * A promise with its settle functions. `handled` attaches a no-op catch, for
 * promises that may reject while nobody has asked for them yet (a dispatcher
 * that fails before anyone calls `stopGracefully`) — callers who do await
 * the promise still see the rejection.
 */
export function createDeferred<T>(handled = false): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  let settled = false
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  if (handled) promise.catch(() => {})
  return {
    promise,
    get settled() {
      return settled
    },
    resolve(value) {
      if (settled) return
      settled = true
      resolve(value)
    },
    reject(error) {
      if (settled) return
      settled = true
      reject(error)
    },
  }
}
