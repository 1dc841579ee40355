import { Fifo } from './fifo.js'

/**
 * Admissions into one group less than this many ms apart, for the same
 * named aggregate, share one enqueue time (the first one's): a wait is
 * overstated by less than this.
 */
export const WAIT_RESOLUTION_MS = 0.1

/** Consecutive admissions into one group with the same counters and (nearly) the same time. */
interface AdmissionRun<C> {
  readonly counters: C
  readonly enqueuedAt: number
  /** Admissions of this run still queued. */
  count: number
}

/**
 * What waits in one ordering group (of the dispatcher or of the aggregate
 * backend): its items oldest first, each with the counters of its named
 * aggregate and its enqueue time, which the group reads when the item
 * starts (its wait) and when it leaves unstarted.
 *
 * Not a second queue: two {@link Fifo}s, one of items and one of runs. The
 * counters and enqueue time are kept per run of consecutive admissions
 * that share them, not per item: a group's items almost always belong to a
 * few named aggregates, and a burst admits many within
 * {@link WAIT_RESOLUTION_MS}, so a waiting item costs one slot and no
 * object of its own (sparse admissions, whose queues are short, make a run
 * each).
 */
export class GroupQueue<T, C> {
  private readonly items = new Fifo<T>()
  private readonly runs = new Fifo<AdmissionRun<C>>()

  get size(): number {
    return this.items.size
  }

  /** Slots the items hold now (see {@link Fifo.slots}). */
  get slots(): number {
    return this.items.slots
  }

  push(item: T, counters: C, now: number): void {
    this.items.push(item)
    const last = this.runs.peekLast()
    if (last !== undefined && last.counters === counters) {
      const since = now - last.enqueuedAt
      // A clock that went back starts a run of its own too.
      if (since >= 0 && since < WAIT_RESOLUTION_MS) {
        last.count++
        return
      }
    }
    this.runs.push({ counters, enqueuedAt: now, count: 1 })
  }

  /** The counters of the oldest item; only while `size > 0`. */
  headCounters(): C {
    return (this.runs.peek() as AdmissionRun<C>).counters
  }

  /** The enqueue time of the oldest item; only while `size > 0`. */
  headEnqueuedAt(): number {
    return (this.runs.peek() as AdmissionRun<C>).enqueuedAt
  }

  /** Removes the oldest item; read its counters and time first. */
  shift(): T | undefined {
    if (this.items.size === 0) return undefined
    const run = this.runs.peek() as AdmissionRun<C>
    if (--run.count === 0) this.runs.shift()
    return this.items.shift()
  }

  /** Empties the queue and calls `visit` with each item and its counters, oldest first. */
  drain(visit: (counters: C, item: T) => void): void {
    while (this.items.size > 0) {
      const counters = this.headCounters()
      visit(counters, this.shift() as T)
    }
  }
}
