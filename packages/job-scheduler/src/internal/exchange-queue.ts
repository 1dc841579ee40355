/** Consumed slots at the front of an array that are cut away once they are also most of it. */
const COMPACT_AT = 4096

/**
 * The end of a run that is the last one: the largest small integer, so that
 * comparisons with it stay integer ones. A queue that never empties could
 * pass it after a billion exchanges; the run is then looked up every time,
 * still correctly.
 */
const OPEN_RUN = 2 ** 30 - 1

/**
 * Admissions into one group less than this many ms apart share one enqueue
 * time (the first one's): a wait is overstated by less than this.
 */
export const WAIT_RESOLUTION_MS = 0.1

/**
 * The FIFO of a dispatcher group: each exchange with its enqueue time and a
 * tag (its named aggregate's counters).
 *
 * The exchanges are one array that grows by `push` and is read from a moving
 * head, as a hand-written pump's queue is: a queued exchange costs one array
 * slot, not an entry object and a list node, and `shift` is a slot read, a
 * slot clear and three counts (a ring grown slot by slot from JavaScript paid
 * a write barrier per slot, and per-shift bookkeeping of tags and times cost
 * as much as the pump's whole step).
 *
 * Tags and times are runs, each stored with the sequence number of its first
 * exchange and found from the head's sequence number when asked for
 * (`headTag`, `headTime`), so `shift` never touches them. A group's
 * exchanges almost always belong to a few aggregate types (one run per
 * change), and admissions less than {@link WAIT_RESOLUTION_MS} apart share
 * a time (a burst pays nothing per exchange; sparse admissions, whose queues
 * are short, a time each).
 *
 * Everything starts over when the queue empties; a queue that never empties
 * cuts its consumed fronts away once they are large and most of the array,
 * so it stays within about twice its size.
 */
export class ExchangeQueue<T, K> {
  private values: (T | undefined)[] = []
  private head = 0
  /** The sequence number of the head: exchanges shifted since the queue last emptied. */
  private taken = 0
  private tags: K[] = []
  private tagStarts: number[] = []
  private tagHead = 0
  /**
   * Where the head's tag run ends (the next run's first sequence number), or
   * {@link OPEN_RUN} while it is the last run: as long as the head is before
   * it, `headTag` is a comparison and a read. Likewise `timeEnd`.
   */
  private tagEnd = OPEN_RUN
  private times: number[] = []
  private timeStarts: number[] = []
  private timeHead = 0
  private timeEnd = OPEN_RUN
  size = 0

  push(value: T, tag: K, time: number): void {
    const seq = this.taken + this.size
    const fresh = this.size === 0
    this.values.push(value)
    this.size++
    const tags = this.tags
    if (fresh || tags[tags.length - 1] !== tag) {
      tags.push(tag)
      this.tagStarts.push(seq)
      // The head's run was the last one: it now ends where this one starts.
      if (tags.length - 2 === this.tagHead) this.tagEnd = seq
    }
    const times = this.times
    const since = fresh ? -1 : time - (times[times.length - 1] as number)
    if (!(since >= 0 && since < WAIT_RESOLUTION_MS)) {
      times.push(time)
      this.timeStarts.push(seq)
      if (times.length - 2 === this.timeHead) this.timeEnd = seq
    }
  }

  /** Slots held now: queued exchanges plus a consumed front not yet cut away. */
  get slots(): number {
    return this.values.length
  }

  /** The tag of the oldest exchange; only while `size > 0`. */
  headTag(): K {
    if (this.taken >= this.tagEnd) this.findHeadTag()
    return this.tags[this.tagHead] as K
  }

  /** The enqueue time of the oldest exchange; only while `size > 0`. */
  headTime(): number {
    if (this.taken >= this.timeEnd) this.findHeadTime()
    return this.times[this.timeHead] as number
  }

  // The head has left its run: find the run it is in now, and where that ends.
  private findHeadTag(): void {
    const starts = this.tagStarts
    let at = this.tagHead
    while (at + 1 < starts.length && (starts[at + 1] as number) <= this.taken) at++
    this.tagHead = at
    this.tagEnd = at + 1 < starts.length ? (starts[at + 1] as number) : OPEN_RUN
  }

  private findHeadTime(): void {
    const starts = this.timeStarts
    let at = this.timeHead
    while (at + 1 < starts.length && (starts[at + 1] as number) <= this.taken) at++
    this.timeHead = at
    this.timeEnd = at + 1 < starts.length ? (starts[at + 1] as number) : OPEN_RUN
  }

  /** Removes the oldest exchange; read its tag and time first. */
  shift(): T | undefined {
    if (this.size === 0) return undefined
    const head = this.head
    const values = this.values
    const value = values[head]
    if (--this.size === 0) {
      this.reset()
      return value
    }
    // Cleared so that a handled exchange is not kept alive by its old slot.
    values[head] = undefined
    this.head = head + 1
    this.taken++
    if (head >= COMPACT_AT && head >= this.size) this.compact()
    return value
  }

  /** Empties the queue and calls `visit` with each exchange's tag and value, oldest first. */
  drain(visit: (tag: K, value: T) => void): void {
    while (this.size > 0) {
      const tag = this.headTag()
      visit(tag, this.shift() as T)
    }
  }

  // Emptied: every column starts over (truncation keeps no slot alive).
  private reset(): void {
    this.values.length = 0
    this.head = 0
    this.taken = 0
    this.tags.length = 0
    this.tagStarts.length = 0
    this.tagHead = 0
    this.tagEnd = OPEN_RUN
    this.times.length = 0
    this.timeStarts.length = 0
    this.timeHead = 0
    this.timeEnd = OPEN_RUN
  }

  // Each consumed front cut is at least half of its array: one native move.
  private compact(): void {
    this.values.splice(0, this.head)
    this.head = 0
    // Runs behind the head's own are consumed; only many sparse times pile up.
    // (Run ends are sequence numbers, which a cut leaves as they are.)
    this.findHeadTag()
    this.findHeadTime()
    if (this.timeHead >= COMPACT_AT) {
      this.times.splice(0, this.timeHead)
      this.timeStarts.splice(0, this.timeHead)
      this.timeHead = 0
    }
    if (this.tagHead >= COMPACT_AT) {
      this.tags.splice(0, this.tagHead)
      this.tagStarts.splice(0, this.tagHead)
      this.tagHead = 0
    }
  }
}
