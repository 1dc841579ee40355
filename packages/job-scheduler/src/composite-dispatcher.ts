import { assertKnownKeys } from '@vega/job-core'
import type { AggregateSchedulerSupplier } from './aggregate-scheduler-supplier.js'
import { BorrowedAggregateSchedulerSupplier } from './borrowed-aggregate-scheduler-supplier.js'
import type { DispatcherState } from './dispatcher-options.js'
import { createDeferred, type Deferred } from './internal/deferred.js'
import { assertPreparable, startsNow } from './internal/dispatcher-state.js'
import { combineErrors } from './internal/errors.js'
import { requireFunction, requireName } from './internal/validate.js'
import type { LifecycleComponent } from './lifecycle.js'

const COMPOSITE_OPTIONS: readonly string[] = ['name', 'schedulerSupplier', 'children']

/**
 * Options of {@link CompositeDispatcher}.
 *
 * @example
 * ```ts
 * const options: CompositeDispatcherOptions = {
 *   name: 'sales-events',
 *   schedulerSupplier: new DefaultAggregateSchedulerSupplier('sales-events'),
 *   children: (supplier) => [
 *     new AggregateDispatcher({ name: 'domain-events', schedulerSupplier: supplier, handle: onDomainEvent }),
 *     new AggregateDispatcher({ name: 'state-events', schedulerSupplier: supplier, handle: onStateEvent }),
 *   ],
 * }
 * ```
 */
export interface CompositeDispatcherOptions {
  /** Names the composite in errors and lifecycle reports. */
  readonly name: string
  /** Owned by the composite: stopped exactly once, after every child. */
  readonly schedulerSupplier: AggregateSchedulerSupplier
  /** Builds the children, each given a borrowed view of the supplier. Called once, by `prepare()`. */
  readonly children: (supplier: AggregateSchedulerSupplier) => readonly LifecycleComponent[]
}

/**
 * A dispatcher made of child dispatchers that share one scheduler supplier
 * (Wow's `CompositeEventDispatcher`). Each child gets a
 * {@link BorrowedAggregateSchedulerSupplier}, so a child's stop never
 * disposes shared schedulers; the composite stops the real supplier itself,
 * exactly once and last.
 *
 * - `prepare()` builds every child before preparing any, then prepares them in
 *   order; if one fails, the children whose preparation was attempted are
 *   stopped in reverse and the failure is rethrown.
 * - `start()` starts children in order; `quiesce()` quiesces them in order.
 * - `stopGracefully()` stops children one at a time in reverse order, then the
 *   supplier. `forceStop()` force-stops children in reverse, then the
 *   supplier; a force stop while the graceful stop is running resolves it at
 *   once and skips the graceful supplier step.
 *
 * @example
 * ```ts
 * const composite = new CompositeDispatcher({ name: 'sales', schedulerSupplier: supplier, children: (s) => [a(s), b(s)] })
 * await composite.prepare()
 * composite.start()
 * await composite.stopGracefully()
 * ```
 */
export class CompositeDispatcher implements LifecycleComponent {
  readonly name: string
  readonly schedulerSupplier: AggregateSchedulerSupplier
  private readonly build: (supplier: AggregateSchedulerSupplier) => readonly LifecycleComponent[]
  private current: DispatcherState = 'NEW'
  private members: readonly LifecycleComponent[] = []
  private graceful: Deferred<void> | undefined = undefined
  private forced = false
  private readonly forcedSignal: Deferred<void> = createDeferred<void>()

  constructor(options: CompositeDispatcherOptions) {
    const where = 'new CompositeDispatcher(options)'
    if (typeof options !== 'object' || options === null) {
      throw new TypeError(
        `${where}: options must be an object with name, schedulerSupplier and children.`,
      )
    }
    assertKnownKeys(where, options, COMPOSITE_OPTIONS)
    this.name = requireName(options.name, where, 'options.name')
    requireFunction(options.children, where, 'options.children')
    const supplier = options.schedulerSupplier
    if (
      typeof supplier !== 'object' ||
      supplier === null ||
      typeof supplier.getOrInitialize !== 'function'
    ) {
      throw new TypeError(
        `${where}: options.schedulerSupplier must be an AggregateSchedulerSupplier.`,
      )
    }
    this.schedulerSupplier = supplier
    this.build = options.children
  }

  get state(): DispatcherState {
    return this.current
  }

  /** The children, once `prepare()` has built them. */
  get children(): readonly LifecycleComponent[] {
    return this.members
  }

  prepare(): Promise<void> {
    assertPreparable(this.name, this.current)
    this.current = 'PREPARED'
    // Every child is built before any is prepared: a construction failure
    // leaves nothing subscribed.
    const members = [...this.build(new BorrowedAggregateSchedulerSupplier(this.schedulerSupplier))]
    return this.prepareChildren(members)
  }

  private async prepareChildren(members: readonly LifecycleComponent[]): Promise<void> {
    const attempted: LifecycleComponent[] = []
    for (const child of members) {
      if (this.forced) break
      attempted.push(child)
      this.members = attempted
      try {
        await child.prepare()
      } catch (error) {
        const errors: unknown[] = [error]
        for (const done of [...attempted].reverse()) {
          try {
            await done.stopGracefully()
          } catch (stopError) {
            errors.push(stopError)
          }
        }
        this.members = []
        throw combineErrors(errors, `[${this.name}] Child preparation failed`)
      }
      // Forced while this child was preparing: it may have subscribed after
      // its force stop, so force it again.
      if (this.forced) child.forceStop()
    }
    this.members = members
  }

  start(): void {
    if (!startsNow(this.name, this.current)) return
    this.current = 'RUNNING'
    for (const child of this.members) child.start()
  }

  quiesce(): void {
    if (this.current === 'STOPPING' || this.current === 'STOPPED') return
    this.current = this.current === 'NEW' ? 'STOPPED' : 'STOPPING'
    for (const child of this.members) child.quiesce?.()
  }

  stopGracefully(): Promise<void> {
    if (this.graceful === undefined) {
      const graceful = createDeferred<void>(true)
      this.graceful = graceful
      if (this.forced) {
        graceful.resolve()
      } else {
        this.quiesce()
        void this.stopInReverse(graceful)
      }
    }
    return this.graceful.promise
  }

  private async stopInReverse(graceful: Deferred<void>): Promise<void> {
    const errors: unknown[] = []
    for (const child of [...this.members].reverse()) {
      if (this.forced) break
      try {
        await Promise.race([child.stopGracefully(), this.forcedSignal.promise])
      } catch (error) {
        errors.push(error)
      }
    }
    if (!this.forced) {
      try {
        await this.schedulerSupplier.stopGracefully()
      } catch (error) {
        errors.push(error)
      }
    }
    this.current = 'STOPPED'
    if (errors.length > 0)
      graceful.reject(combineErrors(errors, `[${this.name}] Graceful stop failed`))
    else graceful.resolve()
  }

  forceStop(): void {
    if (this.forced) return
    this.forced = true
    this.current = 'STOPPED'
    const errors: unknown[] = []
    for (const child of [...this.members].reverse()) {
      try {
        child.forceStop()
      } catch (error) {
        errors.push(error)
      }
    }
    try {
      this.schedulerSupplier.forceStop()
    } catch (error) {
      errors.push(error)
    }
    this.forcedSignal.resolve()
    this.graceful?.resolve()
    if (errors.length > 0) throw combineErrors(errors, `[${this.name}] Force stop failed`)
  }
}
