import { assertKnownKeys, IllegalStateError } from '@vega/job-core'
import {
  type AggregateSchedulerSupplier,
  DefaultAggregateSchedulerSupplier,
} from './aggregate-scheduler-supplier.js'
import { DEFAULT_PARALLELISM, groupOf, toGroupKey } from './group-key.js'
import { createDeferred, type Deferred } from './internal/deferred.js'
import { abortReason } from './internal/errors.js'
import { ExchangeQueue } from './internal/exchange-queue.js'
import { GroupTable } from './internal/group-table.js'
import { isThenable } from './internal/is-thenable.js'
import { LANE_HELD, LaneTask } from './internal/lane-task.js'
import { type AggregateCounters, defaultNow, StatsRecorder } from './internal/stats-recorder.js'
import { requireFunction, requireName, requirePositiveInteger } from './internal/validate.js'
import type { LifecycleComponent } from './lifecycle.js'
import type { NamedAggregate } from './named-aggregate.js'
import { LaneScheduler } from './parallel-scheduler.js'
import type { Scheduler } from './scheduler.js'
import type { SchedulingStats } from './stats.js'

const DISPATCHER_OPTIONS: readonly string[] = [
  'name',
  'handle',
  'source',
  'parallelism',
  'schedulerSupplier',
  'onError',
  'maxInFlight',
  'now',
]

/**
 * The identity of one aggregate instance: its named aggregate plus its `id`
 * (Wow's `AggregateId`). Only `id` chooses the group; `tenantId` is carried,
 * never hashed.
 *
 * @example
 * ```ts
 * const id: AggregateId = { contextName: 'sales', aggregateName: 'Order', id: 'order-1' }
 * ```
 */
export interface AggregateId extends NamedAggregate {
  readonly id: string
  readonly tenantId?: string
}

/**
 * Anything a dispatcher can route: it names its aggregate.
 *
 * @example
 * ```ts
 * interface OrderCommand extends AggregateExchange { readonly type: 'pay' | 'ship' }
 * const command: OrderCommand = { type: 'pay', aggregateId: { contextName: 'sales', aggregateName: 'Order', id: 'order-1' } }
 * ```
 */
export interface AggregateExchange {
  readonly aggregateId: AggregateId
}

/**
 * Handles one exchange. The signal aborts when the dispatcher is
 * force-stopped or its scheduler is disposed. A returned promise holds the
 * exchange's group (and scheduler lane) until it settles.
 *
 * @example
 * ```ts
 * const handle: ExchangeHandler<OrderCommand> = async (command, signal) => {
 *   await orders.apply(command, { signal })
 * }
 * ```
 */
export type ExchangeHandler<E> = (exchange: E, signal: AbortSignal) => unknown

/**
 * What a handler error does. `'fatal'` (the default, as in Wow): intake
 * closes, admitted exchanges drain (or are dropped by `forceStop`), and
 * `stopGracefully()` rejects with the error. `'resume'`: the dispatcher keeps
 * going and reports each error with `console.error`. A function: the
 * dispatcher keeps going and calls it for each error; if it throws, what it
 * throws is fatal.
 *
 * @example
 * ```ts
 * const onError: DispatcherErrorPolicy<OrderCommand> = (error, command) => log.warn({ error, id: command.aggregateId.id })
 * ```
 */
export type DispatcherErrorPolicy<E> = 'fatal' | 'resume' | ((error: unknown, exchange: E) => void)

/**
 * Wow's dispatcher states: NEW → PREPARED → RUNNING → STOPPING → STOPPED.
 *
 * @example
 * ```ts
 * if (dispatcher.state === 'RUNNING') dispatcher.quiesce()
 * ```
 */
export type DispatcherState = 'NEW' | 'PREPARED' | 'RUNNING' | 'STOPPING' | 'STOPPED'

/**
 * Options of {@link AggregateDispatcher}.
 *
 * @example
 * ```ts
 * const options: AggregateDispatcherOptions<OrderCommand> = {
 *   name: 'order-commands',
 *   parallelism: 16,
 *   source: commandStream, // or call dispatcher.dispatch(command)
 *   handle: (command, signal) => apply(command, signal),
 * }
 * ```
 */
export interface AggregateDispatcherOptions<E extends AggregateExchange> {
  /** Names the dispatcher in errors and stats. */
  readonly name: string
  /** Handles one exchange (with a signal that aborts on force-stop); a returned promise holds its group until it settles. */
  readonly handle: ExchangeHandler<E>
  /** Pulled from `start()` until it ends (which drains and stops the dispatcher) or intake closes. */
  readonly source?: AsyncIterable<E> | undefined
  /** The number of ordering groups (Wow's dispatcher `parallelism`); default {@link DEFAULT_PARALLELISM}. */
  readonly parallelism?: number | undefined
  /**
   * Where each named aggregate's scheduler comes from. A supplier passed here
   * is borrowed: the dispatcher never stops it. Without one, the dispatcher
   * creates a `DefaultAggregateSchedulerSupplier(name)` and owns it (stopped
   * gracefully after the drain, forced by `forceStop`).
   */
  readonly schedulerSupplier?: AggregateSchedulerSupplier | undefined
  /** Default `'fatal'`. */
  readonly onError?: DispatcherErrorPolicy<E> | undefined
  /** Pulling from `source` pauses while this many exchanges are admitted and unfinished; default 1024. */
  readonly maxInFlight?: number | undefined
  /** The clock of latency and wait figures, in ms; default `performance.now`. */
  readonly now?: (() => number) | undefined
}

/** How a group reports the end of its exchange to its dispatcher. */
type GroupSettled<E> = (group: Group<E>, ok: boolean, error: unknown) => void

/**
 * One ordering group while it holds work. A group runs one exchange at a
 * time, so it is also the lane task of that exchange: the dispatcher's path
 * into a {@link LaneScheduler} allocates nothing per exchange.
 */
class Group<E> extends LaneTask {
  readonly key: number
  readonly queue: ExchangeQueue<E, AggregateCounters> = new ExchangeQueue<E, AggregateCounters>()
  busy = false
  /** The exchange running now (or being scheduled), with its counters and handler start. */
  exchange: E | undefined = undefined
  counters: AggregateCounters | undefined = undefined
  /**
   * When the handler of `exchange` started; NaN before it starts. Never
   * `undefined`: a field that only ever holds numbers is updated in place,
   * while one that may hold `undefined` boxes every new reading.
   */
  startedAt = Number.NaN
  private readonly runExchange: (group: Group<E>, signal: AbortSignal) => unknown
  private readonly settled: GroupSettled<E>
  private lateOk = false
  private lateValue: unknown = undefined

  constructor(
    key: number,
    runExchange: (group: Group<E>, signal: AbortSignal) => unknown,
    settled: GroupSettled<E>,
  ) {
    super()
    this.key = key
    this.runExchange = runExchange
    this.settled = settled
  }

  run(signal: AbortSignal): unknown {
    return this.runExchange(this, signal)
  }

  done(ok: boolean, value: unknown, sync: boolean): void {
    if (!sync) {
      this.settled(this, ok, value)
      return
    }
    // Outside a promise reaction (a synchronous handler, a refusal, a
    // dispose): react on a microtask, as a settled promise would, so the
    // dispatcher never re-enters a lane's pump or dispose().
    this.lateOk = ok
    this.lateValue = value
    queueMicrotask(this.deliverLate)
  }

  private readonly deliverLate = (): void => {
    const value = this.lateValue
    this.lateValue = undefined
    this.settled(this, this.lateOk, value)
  }
}

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
  private readonly source: AsyncIterable<E> | undefined
  private readonly onError: DispatcherErrorPolicy<E>
  private readonly maxInFlight: number
  private readonly ownsSupplier: boolean
  private readonly recorder: StatsRecorder
  private readonly groups: GroupTable<Group<E>>
  private readonly controller = new AbortController()
  private readonly handlerSignals = new WeakMap<AbortSignal, AbortSignal>()
  // The last pair of handlerSignals: exchanges of one aggregate type share it.
  private lastSchedulerSignal: AbortSignal | undefined = undefined
  private lastHandlerSignal: AbortSignal | undefined = undefined
  private readonly termination: Deferred<void> = createDeferred<void>(true)
  private current: DispatcherState = 'NEW'
  private unfinished = 0
  private iterator: AsyncIterator<E> | undefined = undefined
  private pulling = false
  private sourceClosed = false
  private fatal: { readonly error: unknown } | undefined = undefined
  private forced = false
  /** The clock reading of the edge being handled now, while a lane may start a group synchronously. */
  private instant: number | undefined = undefined

  constructor(options: AggregateDispatcherOptions<E>) {
    const where = 'new AggregateDispatcher(options)'
    if (typeof options !== 'object' || options === null) {
      throw new TypeError(`${where}: options must be an object with name and handle.`)
    }
    assertKnownKeys(where, options, DISPATCHER_OPTIONS)
    this.name = requireName(options.name, where, 'options.name')
    requireFunction(options.handle, where, 'options.handle')
    this.handle = options.handle
    this.parallelism = requirePositiveInteger(
      options.parallelism ?? DEFAULT_PARALLELISM,
      where,
      'options.parallelism',
    )
    this.groups = new GroupTable<Group<E>>(this.parallelism)
    this.maxInFlight = requirePositiveInteger(
      options.maxInFlight ?? 1024,
      where,
      'options.maxInFlight',
    )
    if (
      options.source !== undefined &&
      typeof (options.source as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] !==
        'function'
    ) {
      throw new TypeError(
        `${where}: options.source must be an AsyncIterable (or omit it and call dispatch()).`,
      )
    }
    this.source = options.source
    const onError = options.onError ?? 'fatal'
    if (onError !== 'fatal' && onError !== 'resume' && typeof onError !== 'function') {
      throw new TypeError(`${where}: options.onError must be 'fatal', 'resume' or a function.`)
    }
    this.onError = onError
    if (options.now !== undefined) requireFunction(options.now, where, 'options.now')
    this.recorder = new StatsRecorder(options.now ?? defaultNow)
    this.ownsSupplier = options.schedulerSupplier === undefined
    this.schedulerSupplier =
      options.schedulerSupplier ?? new DefaultAggregateSchedulerSupplier(this.name)
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
    if (this.current !== 'NEW') {
      throw new IllegalStateError(
        `[${this.name}] Dispatcher can only be prepared once. Current state: ${this.current}.`,
      )
    }
    if (this.source !== undefined) this.iterator = this.source[Symbol.asyncIterator]()
    this.current = 'PREPARED'
  }

  start(): void {
    if (this.current === 'RUNNING' || this.current === 'STOPPED') return
    if (this.current !== 'PREPARED') {
      throw new IllegalStateError(
        `[${this.name}] Dispatcher cannot start from state: ${this.current}. Call prepare() first.`,
      )
    }
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
      group = new Group<E>(key, this.runExchange, this.groupSettled)
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
  private runNext(group: Group<E>, now: number): void {
    const queue = group.queue
    if (queue.size === 0) {
      this.groups.delete(group.key)
      return
    }
    const counters = queue.headTag()
    const waited = now - queue.headTime()
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
        return this.handle(exchange, this.handlerSignal(signal))
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
  private readonly runExchange = (group: Group<E>, signal: AbortSignal): unknown => {
    group.startedAt = this.instant ?? this.recorder.sharedNow()
    const result = this.handle(group.exchange as E, this.handlerSignal(signal))
    if (!isThenable(result)) return result
    void this.hold(group, result, signal)
    return LANE_HELD
  }

  /**
   * A group on a lane, as a hand-written pump would run it: one async loop
   * that awaits each exchange and starts the next in place, with no promise,
   * closure or scheduler lookup per exchange. It leaves the loop (and the
   * general path, settled() and runNext(), takes over) on an error, a stop,
   * an empty queue, an exchange of another named aggregate, or another group
   * waiting for a lane — where that path would have given the lane back.
   */
  private async hold(
    group: Group<E>,
    first: PromiseLike<unknown>,
    signal: AbortSignal,
  ): Promise<void> {
    const lanes = group.host as LaneScheduler
    const queue = group.queue
    // The loop only continues with exchanges of this named aggregate.
    const counters = group.counters as AggregateCounters
    const recorder = this.recorder
    const handlerSignal = this.handlerSignal(signal)
    let pending: unknown = first
    for (;;) {
      let ok = true
      let value: unknown
      try {
        value = await pending
      } catch (error) {
        ok = false
        value = error
      }
      if (
        !ok ||
        // A force stop leaves the dispatcher STOPPED, so this covers it too.
        !this.processing() ||
        queue.size === 0 ||
        // Another named aggregate runs on its own scheduler: the general path looks it up.
        queue.headTag() !== counters ||
        !lanes.keeps(group)
      ) {
        lanes.finish(group, ok, value, false)
        return
      }
      // settled() and runNext() in place. One clock reading: the end of this
      // exchange is the start of the next.
      const now = recorder.sharedNow()
      recorder.finished(counters, now - group.startedAt, true)
      this.unfinished--
      recorder.started(counters, now - queue.headTime())
      const exchange = queue.shift() as E
      group.exchange = exchange
      group.startedAt = now
      try {
        pending = this.handle(exchange, handlerSignal)
      } catch (error) {
        pending = Promise.reject(error)
      }
      this.pull()
    }
  }

  private readonly groupSettled = (group: Group<E>, ok: boolean, error: unknown): void => {
    const exchange = group.exchange as E
    const counters = group.counters as AggregateCounters
    group.exchange = undefined
    group.counters = undefined
    const startedAt = group.startedAt
    this.settled(
      group,
      counters,
      exchange,
      Number.isNaN(startedAt) ? undefined : startedAt,
      ok,
      error,
    )
  }

  private settled(
    group: Group<E>,
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
    const policy = this.onError
    if (policy === 'fatal') {
      this.fail(error)
    } else if (policy === 'resume') {
      console.error(`[${this.name}] Exchange handler failed; resuming.`, error)
    } else {
      try {
        policy(error, exchange)
      } catch (thrown) {
        this.fail(thrown)
      }
    }
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

  private handlerSignal(schedulerSignal: AbortSignal): AbortSignal {
    // One combined signal per scheduler, not per exchange: a handler learns
    // of both a force stop and its scheduler's disposal without an allocation
    // per call.
    if (schedulerSignal === this.lastSchedulerSignal) return this.lastHandlerSignal as AbortSignal
    let signal = this.handlerSignals.get(schedulerSignal)
    if (signal === undefined) {
      const combined = new AbortController()
      const own = this.controller.signal
      const follow = (from: AbortSignal): void => {
        if (from.aborted) combined.abort(from.reason)
        else from.addEventListener('abort', () => combined.abort(from.reason), { once: true })
      }
      follow(own)
      follow(schedulerSignal)
      signal = combined.signal
      this.handlerSignals.set(schedulerSignal, signal)
    }
    this.lastSchedulerSignal = schedulerSignal
    this.lastHandlerSignal = signal
    return signal
  }

  private pull(): void {
    if (
      this.iterator === undefined ||
      this.pulling ||
      this.sourceClosed ||
      this.current !== 'RUNNING' ||
      this.unfinished >= this.maxInFlight
    ) {
      return
    }
    this.pulling = true
    void this.pullLoop(this.iterator)
  }

  private async pullLoop(iterator: AsyncIterator<E>): Promise<void> {
    try {
      while (this.current === 'RUNNING' && this.unfinished < this.maxInFlight) {
        const next = await iterator.next()
        // A value that arrives after intake closed is not admitted; the source
        // was told to stop (return()) and keeps it.
        if (this.current !== 'RUNNING') return
        if (next.done === true) {
          this.sourceClosed = true
          this.quiesce()
          return
        }
        this.admit(next.value)
      }
    } catch (error) {
      if (this.current !== 'STOPPED') this.fail(error)
    } finally {
      this.pulling = false
    }
  }

  private closeSource(): void {
    const iterator = this.iterator
    if (this.sourceClosed || iterator === undefined) return
    this.sourceClosed = true
    // Detached, as in Wow: a slow source cleanup never delays the stop.
    try {
      const returned = iterator.return?.()
      if (returned !== undefined) Promise.resolve(returned).catch(() => {})
    } catch {
      // The source is being abandoned; its cleanup failure changes nothing here.
    }
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
