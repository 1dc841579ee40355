import { RingQueue } from './ring-queue.js'

/** Consecutive queued exchanges that share one tag (their aggregate's counters). */
interface Run<K> {
  readonly tag: K
  count: number
}

/** Consumed slots at the front of a queue that never empties before they are cut away. */
const COMPACT_AT = 4096

/**
 * The FIFO of a dispatcher group: each exchange with its enqueue time and a
 * tag (its named aggregate's counters), column-wise: an array of exchanges
 * and an array of unboxed doubles that both grow by `push` and are read
 * from a moving head, as a hand-written pump's queue is. A queued exchange
 * costs an array slot and 8 bytes, not an entry object, a boxed number and
 * a list node; `push` grows an array with one native copy (a ring grown
 * slot by slot from JavaScript pays a write barrier per slot, which
 * dominated a burst). The consumed front is dropped when the queue empties,
 * or cut away once it is both large and most of the array, so a queue that
 * never empties stays within twice its size.
 *
 * Tags are run-length encoded: a group's exchanges almost always belong to
 * a few aggregate types, so a tag is stored once per run of equal tags, not
 * once per exchange. (Times are not: consecutive admissions land in
 * different groups, so a group rarely sees one clock reading twice.)
 */
export class ExchangeQueue<T, K> {
  private values: (T | undefined)[] = []
  private times: number[] = []
  private readonly runs: RingQueue<Run<K>> = new RingQueue<Run<K>>()
  private lastRun: Run<K> | undefined = undefined
  private head = 0
  size = 0

  push(value: T, tag: K, time: number): void {
    this.values.push(value)
    this.times.push(time)
    this.size++
    const last = this.lastRun
    if (last !== undefined && last.count > 0 && last.tag === tag) {
      last.count++
    } else {
      const run: Run<K> = { tag, count: 1 }
      this.runs.push(run)
      this.lastRun = run
    }
  }

  /** Slots held now: queued exchanges plus a consumed front not yet cut away. */
  get slots(): number {
    return this.values.length
  }

  /** The tag of the oldest exchange; only while `size > 0`. */
  headTag(): K {
    return (this.runs.peek() as Run<K>).tag
  }

  /** The enqueue time of the oldest exchange; only while `size > 0`. */
  headTime(): number {
    return this.times[this.head] as number
  }

  /** Removes the oldest exchange; read its tag and time first. */
  shift(): T | undefined {
    if (this.size === 0) return undefined
    const head = this.head
    const values = this.values
    const value = values[head]
    this.size--
    if (this.size === 0) {
      // Emptied: both arrays start over (truncation keeps no slot alive).
      values.length = 0
      this.times.length = 0
      this.head = 0
    } else {
      // Cleared so that a handled exchange is not kept alive by its old slot.
      values[head] = undefined
      this.head = head + 1
      if (head >= COMPACT_AT && head >= this.size) this.compact()
    }
    const run = this.runs.peek() as Run<K>
    // A run emptied here is never extended again (count 0 is checked in push).
    if (--run.count === 0) this.runs.shift()
    return value
  }

  /** Empties the queue and calls `visit` with each exchange's tag and value, oldest first. */
  drain(visit: (tag: K, value: T) => void): void {
    while (this.size > 0) {
      const tag = this.headTag()
      visit(tag, this.shift() as T)
    }
  }

  // The consumed front is at least half of each array: one native move each.
  private compact(): void {
    this.values.splice(0, this.head)
    this.times.splice(0, this.head)
    this.head = 0
  }
}
