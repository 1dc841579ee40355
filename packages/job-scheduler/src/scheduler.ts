/**
 * A piece of work given to a {@link Scheduler}. It receives the scheduler's
 * signal, which aborts when the scheduler is force-disposed.
 *
 * @example
 * ```ts
 * const work: ScheduledWork<string> = async (signal) => {
 *   const response = await fetch('https://example.com', { signal })
 *   return response.text()
 * }
 * ```
 */
export type ScheduledWork<T> = (signal: AbortSignal) => T | PromiseLike<T>

/**
 * An executor with a name and `parallelism` lanes — the TypeScript shape of a
 * Reactor `Scheduler` as Wow uses it. In JavaScript a piece of work holds its
 * lane until the promise it returns settles, so `parallelism` is the cap of
 * work in flight.
 *
 * @example
 * ```ts
 * const scheduler: Scheduler = createParallelScheduler('orders', 4)
 * const total = await scheduler.schedule(async (signal) => computeTotal(signal))
 * await scheduler.disposeGracefully()
 * ```
 */
export interface Scheduler {
  readonly name: string
  readonly parallelism: number
  /** True once `dispose` or `disposeGracefully` was called: new work is refused. */
  readonly isDisposed: boolean
  /** Runs `work` when a lane is free. Rejects (never throws) once the scheduler is disposed. */
  schedule<T>(work: ScheduledWork<T>): Promise<T>
  /** Refuses new work; queued and running work finish; resolves when idle. The same promise every time. */
  disposeGracefully(): Promise<void>
  /** Refuses new work, rejects queued work, aborts running work's signal. Returns at once. */
  dispose(): void
}
