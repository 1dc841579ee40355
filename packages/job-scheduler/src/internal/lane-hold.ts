import type { LaneScheduler } from '../parallel-scheduler.js'
import type { DispatchGroup } from './dispatch-group.js'
import type { AggregateCounters, StatsRecorder } from './stats-recorder.js'

/** What {@link holdLane} asks of the dispatcher whose group it runs. */
export interface HoldHost<E> {
  readonly handle: (exchange: E, signal: AbortSignal) => unknown
  readonly recorder: StatsRecorder
  /** Whether the dispatcher still runs exchanges (running or draining). */
  processing(): boolean
  /** One admitted exchange has finished. */
  finishedOne(): void
  /** An exchange finished: the source may be pulled again. */
  pull(): void
}

/**
 * A group on a lane, as a hand-written pump would run it: one async loop
 * that awaits each exchange and starts the next in place, with no promise,
 * closure or scheduler lookup per exchange. It leaves the loop (and the
 * dispatcher's general path, settled() and runNext(), takes over) on an
 * error, a stop, an empty queue, an exchange of another named aggregate, or
 * another group waiting for a lane — where that path would have given the
 * lane back.
 */
export async function holdLane<E>(
  host: HoldHost<E>,
  group: DispatchGroup<E>,
  first: PromiseLike<unknown>,
  handlerSignal: AbortSignal,
): Promise<void> {
  const lanes = group.host as LaneScheduler
  const queue = group.queue
  // The loop only continues with exchanges of this named aggregate.
  const counters = group.counters as AggregateCounters
  const { recorder, handle } = host
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
      !host.processing() ||
      queue.size === 0 ||
      // Another named aggregate runs on its own scheduler: the general path looks it up.
      queue.headCounters() !== counters ||
      !lanes.keeps(group)
    ) {
      lanes.finish(group, ok, value, false)
      return
    }
    // settled() and runNext() in place. One clock reading: the end of this
    // exchange is the start of the next.
    const now = recorder.sharedNow()
    recorder.finished(counters, now - group.startedAt, true)
    host.finishedOne()
    recorder.started(counters, now - queue.headEnqueuedAt())
    const exchange = queue.shift() as E
    group.exchange = exchange
    group.startedAt = now
    try {
      pending = handle(exchange, handlerSignal)
    } catch (error) {
      pending = Promise.reject(error)
    }
    host.pull()
  }
}
