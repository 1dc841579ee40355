import { IllegalStateError } from '@vega/job-core'
import type { AggregateExchange, ExchangeHandler } from './aggregate-exchange.js'
import {
  type AggregateSchedulerSupplier,
  DefaultAggregateSchedulerSupplier,
} from './aggregate-scheduler-supplier.js'
import {
  type AggregateDispatcherOptions,
  applyErrorPolicy,
  type DispatcherErrorPolicy,
  type DispatcherState,
  resolveDispatcherOptions,
} from './dispatcher-options.js'
import { groupOf, toGroupKey } from './group-key.js'
import { createDeferred, type Deferred } from './internal/deferred.js'
import { DispatchGroup, type GroupSettled } from './internal/dispatch-group.js'
import { assertPreparable, startsNow } from './internal/dispatcher-state.js'
import { abortReason } from './internal/errors.js'
import { GroupTable } from './internal/group-table.js'
import { HandlerSignals } from './internal/handler-signals.js'
import { isThenable } from './internal/is-thenable.js'
import { type HoldHost, holdLane } from './internal/lane-hold.js'
import { LANE_HELD } from './internal/lane-task.js'
import { SourceIntake } from './internal/source-intake.js'
import { type AggregateCounters, StatsRecorder } from './internal/stats-recorder.js'
import type { LifecycleComponent } from './lifecycle.js'
import { LaneScheduler } from './parallel-scheduler.js'
import type { Scheduler } from './scheduler.js'
import type { SchedulingStats } from './stats.js'

/**
 * Routes exchanges to their aggregate's scheduler, one at a time per
 * group: `group = toGroupKey(aggregateId.id, parallelism)`; inside a group,
 * exchanges enter the handler one at a time in arrival order; groups run
 * concurrently on the named aggregate's {@link Scheduler}. Group queues exist
 * only while they hold work, so memory is bounded by `parallelism`, not by
 * the number of ids.
 *
 * Lifecycle (Wow's): `prepare()` subscribes without processing; `start()`
 * opens intake; `quiesce()` closes it and lets admitted exchanges drain
 * without cancellation; `stopGracefully()` quiesces and resolves when drained
 * (rejects with the fatal error, if one happened); `forceStop()` returns at
 * once, aborts running handlers' signals and drops queued exchanges.
 *
 * @example
 * ```ts
 * const dispatcher = new AggregateDispatcher<OrderCommand>({
 *   name: 'order-commands',
 *   parallelism: 16,
 *   handle: async (command, signal) => apply(command, signal),
 * })
 * dispatcher.prepare()
 * dispatcher.start()
 * dispatcher.dispatch(command)
 * await dispatcher.stopGracefully()
 * ```
 */
export class AggregateDispatcher<E extends AggregateExchange> implements LifecycleComponent {
  readonly name: string
  readonly parallelism: number
  readonly schedulerSupplier: AggregateSchedulerSupplier
  private readonly handle: ExchangeHandler<E>
  private readonly onError: DispatcherErrorPolicy<E>
  private readonly maxInFlight: number
  private readonly ownsSupplier: boolean
  private readonly recorder: StatsRecorder
  private readonly groups: GroupTable<DispatchGroup<E>>
  private readonly controller = new AbortController()
  private readonly handlerSignals = new HandlerSignals(this.controller.signal)
  private readonly termination: Deferred<void> = createDeferred<void>(true)
  private current: DispatcherState = 'NEW'
  private unfinished = 0
  private readonly intake: SourceIntake<E> | undefined
  private fatal: { readonly error: unknown } | undefined = undefined
  private forced = false
  /** A group's exchange ended on a lane (see DispatchGroup.done). */
  private readonly groupSettled: GroupSettled<E> = (
    group,
    counters,
    exchange,
    startedAt,
    ok,
    error,
  ) => this.settled(group, counters, exchange, startedAt, ok, error)
  /** What a group held on a lane asks of the dispatcher (see `internal/lane-hold.ts`). */
  private readonly laneHost: HoldHost<E>
  /** The clock reading of the edge being handled now, while a lane may start a group synchronously. */
  private instant: number | undefined = undefined

  constructor(options: AggregateDispatcherOptions<E>) {
    const resolved = resolveDispatcherOptions(options)
    this.name = resolved.name
    this.handle = resolved.handle
    this.parallelism = resolved.parallelism
    this.maxInFlight = resolved.maxInFlight
    this.onError = resolved.onError
    this.groups = new GroupTable<DispatchGroup<E>>(this.parallelism)
    this.recorder = new StatsRecorder(resolved.now)
    this.laneHost = {
      handle: resolved.handle,
      recorder: this.recorder,
      processing: () => this.processing(),
      finishedOne: () => {
        this.unfinished--
      },
      pull: () => this.pull(),
    }
    this.ownsSupplier = options.schedulerSupplier === undefined
    this.schedulerSupplier =
      options.schedulerSupplier ?? new DefaultAggregateSchedulerSupplier(this.name)
    this.intake =
      options.source === undefined
        ? undefined
        : new SourceIntake(options.source, {
            accepting: () => this.current === 'RUNNING' && this.unfinished < this.maxInFlight,
            running: () => this.current === 'RUNNING',
            admit: (exchange) => this.admit(exchange),
            ended: () => this.quiesce(),
            failed: (error) => {
              if (this.current !== 'STOPPED') this.fail(error)
            },
          })
  }

  get state(): DispatcherState {
    return this.current
  }

  /** Group queues alive now: at most `parallelism`, and 0 when idle. */
  get activeGroups(): number {
    return this.groups.size
  }

  /** Settles when the dispatcher has stopped: resolves, or rejects with the fatal error. */
  get terminated(): Promise<void> {
    return this.termination.promise
  }

  prepare(): void {
    assertPreparable(this.name, this.current)
    this.intake?.open()
    this.current = 'PREPARED'
  }

  start(): void {
    if (!startsNow(this.name, this.current)) return
    this.current = 'RUNNING'
    this.runIdleGroups()
    this.pull()
  }

  /**
   * Admits one exchange. Returns `false` once intake is closed (stopping or
   * stopped): racing a shutdown is normal, so it does not throw. Before
   * `start()` (but after `prepare()`) the exchange waits in its group.
   * Throws `IllegalStateError` before `prepare()`; an exchange whose group key
   * cannot be computed is fatal to the dispatcher and its error is rethrown.
   */
  dispatch(exchange: E): boolean {
    if (this.current === 'NEW') {
      throw new IllegalStateError(
        `[${this.name}] Dispatcher cannot dispatch in state: NEW. Call prepare() first.`,
      )
    }
    if (this.current === 'STOPPING' || this.current === 'STOPPED') return false
    this.admit(exchange)
    return true
  }

  quiesce(): void {
    switch (this.current) {
      case 'NEW':
        this.current = 'STOPPED'
        this.closeSource()
        void this.finish()
        return
      case 'PREPARED':
      case 'RUNNING':
        this.current = 'STOPPING'
        this.closeSource()
        this.recorder.drainStarted()
        // Exchanges admitted before start() drain too: graceful means none is lost.
        this.runIdleGroups()
        this.checkDrained()
        return
      default:
        return
    }
  }

  stopGracefully(): Promise<void> {
    this.quiesce()
    return this.termination.promise
  }

  forceStop(): void {
    if (this.forced) return
    this.forced = true
    this.current = 'STOPPED'
    this.closeSource()
    for (const group of this.groups.values()) {
      group.queue.drain((counters) => {
        this.unfinished--
        this.recorder.left(counters)
      })
    }
    this.groups.clear()
    this.controller.abort(abortReason(`[${this.name}] Dispatcher was force-stopped.`))
    if (this.ownsSupplier) this.schedulerSupplier.forceStop()
    this.settleTermination()
  }

  stats(): SchedulingStats {
    return this.recorder.snapshot(this.name, this.groups.size)
  }

  private admit(exchange: E): void {
    let key: number
    let counters: AggregateCounters
    try {
      const aggregateId = exchange.aggregateId
      const id = aggregateId.id
      // toGroupKey for what it must reject (with its error); groupOf inlines.
      key =
        typeof id === 'string' ? groupOf(id, this.parallelism) : toGroupKey(id, this.parallelism)
      counters = this.recorder.counters(aggregateId)
    } catch (error) {
      this.fail(error)
      throw error
    }
    let group = this.groups.get(key)
    if (group === undefined) {
      group = new DispatchGroup<E>(key, this.runExchange, this.groupSettled)
      this.groups.set(key, group)
    }
    // One clock read per edge (shared by a burst of admissions): an exchange
    // that starts at once waited 0.
    const now = this.recorder.sharedNow()
    group.queue.push(exchange, counters, now)
    this.unfinished++
    this.recorder.admitted(counters)
    if (!group.busy && this.processing()) this.runNext(group, now)
  }

  private processing(): boolean {
    return this.current === 'RUNNING' || this.current === 'STOPPING'
  }

  private runIdleGroups(): void {
    let now: number | undefined
    for (const group of this.groups.values()) {
      if (group.busy) continue
      now ??= this.recorder.now()
      this.runNext(group, now)
    }
  }

  /** Starts the group's next exchange; `now` is the caller's clock read of this instant. */
  private runNext(group: DispatchGroup<E>, now: number): void {
    const queue = group.queue
    if (queue.size === 0) {
      this.groups.delete(group.key)
      return
    }
    const counters = queue.headCounters()
    const waited = now - queue.headEnqueuedAt()
    const exchange = queue.shift() as E
    group.busy = true
    group.exchange = exchange
    group.counters = counters
    group.startedAt = Number.NaN
    this.recorder.started(counters, waited)
    let scheduler: Scheduler
    try {
      scheduler = this.schedulerSupplier.getOrInitialize(exchange.aggregateId)
    } catch (error) {
      group.done(false, error, true)
      return
    }
    if (scheduler instanceof LaneScheduler) {
      // A lane may start the group at once (it just gave its lane back):
      // the handler then starts at this same clock reading.
      const outer = this.instant
      this.instant = now
      try {
        scheduler.enqueue(group)
      } finally {
        this.instant = outer
      }
      return
    }
    // Any other scheduler: its public, promise-based API.
    let startedAt: number | undefined
    let scheduled: Promise<unknown>
    try {
      scheduled = scheduler.schedule((signal) => {
        startedAt = this.recorder.now()
        return this.handle(exchange, this.handlerSignals.of(signal))
      })
    } catch (error) {
      scheduled = Promise.reject(error)
    }
    scheduled.then(
      () => this.settled(group, counters, exchange, startedAt, true, undefined),
      (error: unknown) => this.settled(group, counters, exchange, startedAt, false, error),
    )
  }

  // A group's exchange on a lane: the work the lane runs. A promise keeps
  // the lane in hold(), which runs the group's next exchanges on it for as
  // long as nothing else waits for a lane.
  private readonly runExchange = (group: DispatchGroup<E>, signal: AbortSignal): unknown => {
    group.startedAt = this.instant ?? this.recorder.sharedNow()
    const result = this.handle(group.exchange as E, this.handlerSignals.of(signal))
    if (!isThenable(result)) return result
    void holdLane(this.laneHost, group, result, this.handlerSignals.of(signal))
    return LANE_HELD
  }

  private settled(
    group: DispatchGroup<E>,
    counters: AggregateCounters,
    exchange: E,
    startedAt: number | undefined,
    ok: boolean,
    error: unknown,
  ): void {
    // One clock reading: the end of this exchange is the start of the next.
    const now = this.recorder.sharedNow()
    const duration = startedAt === undefined ? undefined : now - startedAt
    this.recorder.finished(counters, duration, ok)
    this.unfinished--
    group.busy = false
    if (this.forced) return
    if (!ok) this.report(error, exchange)
    // An onError function may have dispatched into this group and started it.
    if (!group.busy && this.processing()) this.runNext(group, now)
    this.pull()
    this.checkDrained()
  }

  private report(error: unknown, exchange: E): void {
    const fatal = applyErrorPolicy(this.onError, this.name, error, exchange)
    if (fatal !== undefined) this.fail(fatal.error)
  }

  // Wow's fatal path: the first error closes intake; what was admitted drains.
  private fail(error: unknown): void {
    if (this.fatal === undefined) this.fatal = { error }
    if (this.current === 'NEW') {
      this.current = 'STOPPED'
      this.settleTermination()
      return
    }
    this.quiesce()
  }

  private pull(): void {
    this.intake?.pull()
  }

  private closeSource(): void {
    this.intake?.close()
  }

  private checkDrained(): void {
    if (this.current !== 'STOPPING' || this.unfinished > 0) return
    this.current = 'STOPPED'
    void this.finish()
  }

  private async finish(): Promise<void> {
    if (this.ownsSupplier) {
      try {
        await this.schedulerSupplier.stopGracefully()
      } catch (error) {
        if (this.fatal === undefined) this.fatal = { error }
      }
    }
    this.settleTermination()
  }

  private settleTermination(): void {
    if (this.fatal !== undefined) this.termination.reject(this.fatal.error)
    else this.termination.resolve()
  }
}
