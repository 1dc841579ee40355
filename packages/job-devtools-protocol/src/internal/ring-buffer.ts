/** A contiguous range of seqs that will never be delivered, and why. */
export interface LostRange {
  readonly fromSeq: number
  readonly toSeq: number
  readonly reason: string
}

/**
 * The bookkeeping of a bounded FIFO: which slot of a `capacity`-long table
 * the next item goes to, which seq it gets (1, 2, 3 …), and which seqs were
 * lost. When full, a push drops the oldest and remembers the dropped seqs as
 * one range: drops always take the oldest, so the range stays contiguous
 * until the next drain. The items themselves live in the caller's table,
 * indexed by slot, so a push allocates nothing.
 */
export class RingBuffer {
  private head = 0
  private count = 0
  /** The seq of the last push; the oldest held item has `last - count + 1`. */
  private last = 0
  // The pending lost range, kept as fields: an overflowing burst widens it
  // once per push and must not build an object each time. `lostTo` 0 = none.
  private lostFrom = 0
  private lostTo = 0
  private lostReason = ''

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.count
  }

  /** The seq given to the latest push (0 before the first). */
  get lastSeq(): number {
    return this.last
  }

  /**
   * Takes the next seq and returns the slot that now holds it, dropping the
   * oldest item (its slot is the one returned) when the buffer is full.
   */
  push(): number {
    const capacity = this.capacity
    if (this.count === capacity) {
      const dropped = this.last - capacity + 1
      this.head = this.head + 1 === capacity ? 0 : this.head + 1
      this.count -= 1
      this.markLost(dropped, dropped, 'overflow')
    }
    let slot = this.head + this.count
    if (slot >= capacity) slot -= capacity
    this.count += 1
    this.last += 1
    return slot
  }

  /** Records seqs lost elsewhere (a failed send), merged with any pending range. */
  markLost(fromSeq: number, toSeq: number, reason: string): void {
    if (this.lostTo === 0) {
      this.lostFrom = fromSeq
      this.lostTo = toSeq
      this.lostReason = reason
    } else {
      if (fromSeq < this.lostFrom) this.lostFrom = fromSeq
      if (toSeq > this.lostTo) this.lostTo = toSeq
    }
  }

  /**
   * Empties the buffer: the lost range (if any), and what `take` makes of
   * each held slot, oldest first. `take` must not push to this buffer.
   */
  drain<R>(take: (slot: number, seq: number) => R): {
    readonly lost: LostRange | undefined
    readonly items: R[]
  } {
    const count = this.count
    const capacity = this.capacity
    const first = this.last - count + 1
    const items = new Array<R>(count)
    let slot = this.head
    for (let index = 0; index < count; index += 1) {
      items[index] = take(slot, first + index)
      slot = slot + 1 === capacity ? 0 : slot + 1
    }
    const lost: LostRange | undefined =
      this.lostTo === 0
        ? undefined
        : { fromSeq: this.lostFrom, toSeq: this.lostTo, reason: this.lostReason }
    this.head = 0
    this.count = 0
    this.lostFrom = 0
    this.lostTo = 0
    this.lostReason = ''
    return { lost, items }
  }
}
