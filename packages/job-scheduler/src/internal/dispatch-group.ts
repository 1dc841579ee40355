import { GroupQueue } from './group-queue.js'
import { LaneTask } from './lane-task.js'
import type { AggregateCounters } from './stats-recorder.js'

/** How a group reports the end of its exchange to its dispatcher. */
export type GroupSettled<E> = (
  group: DispatchGroup<E>,
  counters: AggregateCounters,
  exchange: E,
  startedAt: number | undefined,
  ok: boolean,
  error: unknown,
) => void

/**
 * One ordering group while it holds work. A group runs one exchange at a
 * time, so it is also the lane task of that exchange: the dispatcher's path
 * into a {@link LaneScheduler} allocates nothing per exchange.
 */
export class DispatchGroup<E> extends LaneTask {
  readonly key: number
  readonly queue: GroupQueue<E, AggregateCounters> = new GroupQueue<E, AggregateCounters>()
  busy = false
  /** The exchange running now (or being scheduled), with its counters and handler start. */
  exchange: E | undefined = undefined
  counters: AggregateCounters | undefined = undefined
  /**
   * When the handler of `exchange` started; NaN before it starts. Never
   * `undefined`: a field that only ever holds numbers is updated in place,
   * while one that may hold `undefined` boxes every new reading.
   */
  startedAt: number = Number.NaN
  private readonly runExchange: (group: DispatchGroup<E>, signal: AbortSignal) => unknown
  private readonly settled: GroupSettled<E>
  private lateOk = false
  private lateValue: unknown = undefined

  constructor(
    key: number,
    runExchange: (group: DispatchGroup<E>, signal: AbortSignal) => unknown,
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
      this.settle(ok, value)
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
    this.settle(this.lateOk, value)
  }

  /** Hands the ended exchange, its counters and its start to the dispatcher, and forgets them. */
  private settle(ok: boolean, value: unknown): void {
    const exchange = this.exchange as E
    const counters = this.counters as AggregateCounters
    const startedAt = this.startedAt
    this.exchange = undefined
    this.counters = undefined
    this.settled(
      this,
      counters,
      exchange,
      Number.isNaN(startedAt) ? undefined : startedAt,
      ok,
      value,
    )
  }
}
