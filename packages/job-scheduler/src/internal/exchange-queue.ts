import { RingQueue } from './ring-queue.js'

/** Consecutive queued exchanges that share one tag (their aggregate's counters). */
interface Run<K> {
  readonly tag: K
  count: number
}

/** Consumed slots at the front of a queue that never empties before they are cut away. */
const COMPACT_AT = 4096

/**
 * Admissions into one group less than this many ms apart share one enqueue
 * time (the first one's): a wait is overstated by less than this.
 */
export const WAIT_RESOLUTION_MS = 0.1

/**
 * The FIFO of a dispatcher group: each exchange with its enqueue time and a
 * tag (its named aggregate's counters). The exchanges are one array that
 * grows by `push` and is read from a moving head, as a hand-written pump's
 * queue is: a queued exchange costs one array slot, not an entry object and
 * a list node (and `push` grows the array with one native copy; a ring
 * grown slot by slot from JavaScript pays a write barrier per slot, which
 * dominated a burst). The consumed front is dropped when the queue empties,
 * or cut away once it is both large and most of the array, so a queue that
 * never empties stays within about twice its size.
 *
 * Times and tags are run-length encoded, so a burst pays for neither per
 * exchange. Times: `(time, count)` pairs of unboxed doubles, a new pair only
 * when an admission comes {@link WAIT_RESOLUTION_MS} or more after the
 * current pair's time (at worst 16 bytes per exchange, when admissions are
 * sparse and queues short). Tags: a group's exchanges almost always belong
 * to a few aggregate types, so a tag is stored once per run of equal tags.
 */
export class ExchangeQueue<T, K> {
  private values: (T | undefined)[] = []
  private head = 0
  /** `[time, count, time, count, …]`: the live pairs start at `markHead`. */
  private marks: number[] = []
  private markHead = 0
  private readonly runs: RingQueue<Run<K>> = new RingQueue<Run<K>>()
  private lastRun: Run<K> | undefined = undefined
  size = 0

  push(value: T, tag: K, time: number): void {
    this.values.push(value)
    this.size++
    const marks = this.marks
    const end = marks.length
    if (end > this.markHead) {
      const since = time - (marks[end - 2] as number)
      if (since >= 0 && since < WAIT_RESOLUTION_MS) {
        marks[end - 1]!++
      } else {
        marks.push(time, 1)
      }
    } else {
      marks.push(time, 1)
    }
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
    return this.marks[this.markHead] as number
  }

  /** Removes the oldest exchange; read its tag and time first. */
  shift(): T | undefined {
    if (this.size === 0) return undefined
    const head = this.head
    const values = this.values
    const value = values[head]
    this.size--
    if (this.size === 0) {
      // Emptied: every column starts over (truncation keeps no slot alive).
      values.length = 0
      this.head = 0
      this.marks.length = 0
      this.markHead = 0
    } else {
      // Cleared so that a handled exchange is not kept alive by its old slot.
      values[head] = undefined
      this.head = head + 1
      if (head >= COMPACT_AT && head >= this.size) this.compact()
      const marks = this.marks
      const at = this.markHead
      if (--marks[at + 1]! === 0) {
        this.markHead = at + 2
        if (at >= COMPACT_AT && at >= marks.length - at) this.compactMarks()
      }
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

  // The consumed front is at least half of the array: one native move.
  private compact(): void {
    this.values.splice(0, this.head)
    this.head = 0
  }

  private compactMarks(): void {
    this.marks.splice(0, this.markHead)
    this.markHead = 0
  }
}
