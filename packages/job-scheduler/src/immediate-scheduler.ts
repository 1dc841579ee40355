import type { ScheduledWork, Scheduler } from './scheduler.js'

let neverAborted: AbortSignal | undefined

/**
 * A {@link Scheduler} that runs work at once, inside `schedule()`, like
 * Reactor's `Schedulers.immediate()`. Meant for tests and for suppliers
 * that must not add a hop. It is shared, so it is never disposed:
 * `dispose` and `disposeGracefully` do nothing and its signal never aborts.
 *
 * @example
 * ```ts
 * const value = await immediateScheduler.schedule(() => 42) // the work ran synchronously
 * ```
 */
export const immediateScheduler: Scheduler = Object.freeze({
  name: 'immediate',
  parallelism: Number.POSITIVE_INFINITY,
  isDisposed: false,
  schedule<T>(work: ScheduledWork<T>): Promise<T> {
    if (typeof work !== 'function') {
      throw new TypeError(`immediateScheduler.schedule(work): work must be a function.`)
    }
    neverAborted ??= new AbortController().signal
    try {
      return Promise.resolve(work(neverAborted))
    } catch (error) {
      return Promise.reject(error)
    }
  },
  disposeGracefully(): Promise<void> {
    return Promise.resolve()
  },
  dispose(): void {},
})
