import type { AggregateSchedulerSupplier } from './aggregate-scheduler-supplier.js'
import type { NamedAggregate } from './named-aggregate.js'
import type { Scheduler } from './scheduler.js'

/**
 * A non-owning view of a supplier, handed to children that share their
 * parent's schedulers: `getOrInitialize` passes through, `stopGracefully()`
 * and `forceStop()` do nothing. Only the owner stops the real supplier —
 * once, after every borrower has stopped.
 *
 * @example
 * ```ts
 * const owned = new DefaultAggregateSchedulerSupplier('orders-service')
 * const borrowed = new BorrowedAggregateSchedulerSupplier(owned)
 * await borrowed.stopGracefully() // no effect on `owned`
 * ```
 */
export class BorrowedAggregateSchedulerSupplier implements AggregateSchedulerSupplier {
  readonly delegate: AggregateSchedulerSupplier

  constructor(delegate: AggregateSchedulerSupplier) {
    if (
      typeof delegate !== 'object' ||
      delegate === null ||
      typeof delegate.getOrInitialize !== 'function'
    ) {
      throw new TypeError(
        'new BorrowedAggregateSchedulerSupplier(delegate): delegate must be an AggregateSchedulerSupplier.',
      )
    }
    this.delegate = delegate
  }

  getOrInitialize(namedAggregate: NamedAggregate): Scheduler {
    return this.delegate.getOrInitialize(namedAggregate)
  }

  stopGracefully(): Promise<void> {
    return Promise.resolve()
  }

  forceStop(): void {}
}
