import { IllegalStateError } from '@vega/job-core'
import type { GracefullyStoppable } from './gracefully-stoppable.js'
import { availableCpus } from './internal/cpus.js'
import { createDeferred, type Deferred } from './internal/deferred.js'
import { NamedMemo } from './internal/named-memo.js'
import { requireName, requirePositiveInteger } from './internal/validate.js'
import { type NamedAggregate, toNamedAggregate } from './named-aggregate.js'
import { createParallelScheduler } from './parallel-scheduler.js'
import type { Scheduler } from './scheduler.js'

/**
 * Supplies the {@link Scheduler} of a named aggregate, and owns what it
 * supplies (Wow's `AggregateSchedulerSupplier`).
 *
 * @example
 * ```ts
 * const supplier: AggregateSchedulerSupplier = new DefaultAggregateSchedulerSupplier('orders-service')
 * const scheduler = supplier.getOrInitialize(toNamedAggregate('sales.Order'))
 * await supplier.stopGracefully()
 * ```
 */
export interface AggregateSchedulerSupplier extends GracefullyStoppable {
  getOrInitialize(namedAggregate: NamedAggregate): Scheduler
  /** Disposes every supplied scheduler at once; takes over a graceful stop in progress. */
  forceStop(): void
}

/**
 * The default supplier: one {@link createParallelScheduler} per materialized
 * named aggregate, named `${name}-${aggregateName}`, created on first use and
 * cached. A stop (graceful or forced) closes creation for good: later
 * `getOrInitialize` calls throw `IllegalStateError`
 * (`Aggregate scheduler supplier[<name>] has stopped.`).
 *
 * - `stopGracefully()` is cold and memoised: the first call takes every cached
 *   scheduler, clears the cache and disposes them gracefully; every caller
 *   gets that same promise.
 * - `forceStop()` disposes them at once, and takes over a graceful stop in
 *   progress: its callers resolve. Calling it again is harmless.
 *
 * @example
 * ```ts
 * const supplier = new DefaultAggregateSchedulerSupplier('orders-service', 4)
 * const order = supplier.getOrInitialize(toNamedAggregate('sales.Order'))
 * order.name // 'orders-service-Order'
 * await supplier.stopGracefully()
 * ```
 */
export class DefaultAggregateSchedulerSupplier implements AggregateSchedulerSupplier {
  readonly name: string
  /** Lanes of each supplied scheduler; defaults to the number of CPUs. */
  readonly parallelism: number
  private readonly schedulers = new Map<string, Scheduler>()
  // Dispatchers ask once per exchange: a hit skips materializing the name and
  // building its key. Cleared with `schedulers`.
  private readonly memo = new NamedMemo<Scheduler>()
  private stopped = false
  private terminalSchedulers: readonly Scheduler[] | undefined = undefined
  private graceful: Deferred<void> | undefined = undefined

  constructor(name: string, parallelism: number = availableCpus()) {
    this.name = requireName(name, 'new DefaultAggregateSchedulerSupplier(name, parallelism)')
    this.parallelism = requirePositiveInteger(
      parallelism,
      'new DefaultAggregateSchedulerSupplier(name, parallelism)',
      'parallelism',
    )
  }

  /** Whether a stop has begun; from then on nothing new is created. */
  get isStopped(): boolean {
    return this.stopped
  }

  /** How many schedulers are cached now (one per named aggregate used). */
  get size(): number {
    return this.schedulers.size
  }

  getOrInitialize(namedAggregate: NamedAggregate): Scheduler {
    if (this.stopped) {
      throw new IllegalStateError(`Aggregate scheduler supplier[${this.name}] has stopped.`)
    }
    let contextName: unknown
    let aggregateName: unknown
    if (typeof namedAggregate === 'object' && namedAggregate !== null) {
      contextName = namedAggregate.contextName
      aggregateName = namedAggregate.aggregateName
      const memoized = this.memo.get(contextName, aggregateName)
      if (memoized !== undefined) return memoized
    }
    const materialized = toNamedAggregate(namedAggregate)
    const key = `${materialized.contextName}\u001f${materialized.aggregateName}`
    let scheduler = this.schedulers.get(key)
    if (scheduler === undefined) {
      scheduler = createParallelScheduler(
        `${this.name}-${materialized.aggregateName}`,
        this.parallelism,
      )
      this.schedulers.set(key, scheduler)
    }
    this.memo.set(contextName, aggregateName, scheduler)
    return scheduler
  }

  stopGracefully(): Promise<void> {
    if (this.graceful === undefined) {
      const graceful = createDeferred<void>(true)
      this.graceful = graceful
      Promise.all(this.closeAndSnapshot().map((scheduler) => scheduler.disposeGracefully())).then(
        () => graceful.resolve(),
        (error: unknown) => graceful.reject(error),
      )
    }
    return this.graceful.promise
  }

  forceStop(): void {
    for (const scheduler of this.closeAndSnapshot()) scheduler.dispose()
    this.graceful?.resolve()
  }

  // Both stops take the same snapshot: a scheduler is either cached (and will
  // be in the snapshot) or refused, never removed without being disposed.
  private closeAndSnapshot(): readonly Scheduler[] {
    this.stopped = true
    if (this.terminalSchedulers === undefined) {
      this.terminalSchedulers = [...this.schedulers.values()]
      this.schedulers.clear()
      this.memo.clear()
    }
    return this.terminalSchedulers
  }
}
