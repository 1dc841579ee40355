/** A contiguous range of seqs that will never be delivered, and why. */
export interface LostRange {
  readonly fromSeq: number
  readonly toSeq: number
  readonly reason: string
}

/**
 * A bounded FIFO of what waits for the next flush, numbered 1, 2, 3 … as it
 * is pushed. When full, a push drops the oldest and remembers the dropped
 * seqs as one range: drops always take the oldest, so the range stays
 * contiguous until the next drain.
 *
 * Nothing is allocated per push: the seq of a slot follows from its position
 * and each item's timestamp and tag sit in typed columns. That matters in a
 * burst, where almost every push is dropped before any flush: an item costs
 * three writes, and only what survives to a drain is turned into an envelope.
 */
export class RingBuffer<T> {
  private readonly items: (T | undefined)[]
  private readonly stamps: Float64Array
  private readonly tags: Uint8Array
  private head = 0
  private count = 0
  /** The seq of the last push; the oldest held item has `last - count + 1`. */
  private last = 0
  // The pending lost range, kept as fields: an overflowing burst widens it
  // once per push and must not build an object each time. `lostTo` 0 = none.
  private lostFrom = 0
  private lostTo = 0
  private lostReason = ''

  constructor(readonly capacity: number) {
    this.items = new Array<T | undefined>(capacity).fill(undefined)
    this.stamps = new Float64Array(capacity)
    this.tags = new Uint8Array(capacity)
  }

  get size(): number {
    return this.count
  }

  /** The seq given to the latest push (0 before the first). */
  get lastSeq(): number {
    return this.last
  }

  /** Holds `item` with its timestamp and a small tag (0–255) under the next seq, and returns that seq. */
  push(item: T, ts: number, tag: number): number {
    const capacity = this.capacity
    if (this.count === capacity) {
      const dropped = this.last - capacity + 1
      this.items[this.head] = undefined
      this.head = this.head + 1 === capacity ? 0 : this.head + 1
      this.count -= 1
      this.markLost(dropped, dropped, 'overflow')
    }
    let slot = this.head + this.count
    if (slot >= capacity) slot -= capacity
    this.items[slot] = item
    this.stamps[slot] = ts
    this.tags[slot] = tag
    this.count += 1
    this.last += 1
    return this.last
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
   * Empties the buffer: the lost range (if any), and each held item, oldest
   * first, turned by `build` (given its seq, timestamp and tag). `build` must
   * not push to this buffer.
   */
  drain<R>(build: (item: T, seq: number, ts: number, tag: number) => R): {
    readonly lost: LostRange | undefined
    readonly items: R[]
  } {
    const count = this.count
    const capacity = this.capacity
    const first = this.last - count + 1
    const items = new Array<R>(count)
    let slot = this.head
    for (let index = 0; index < count; index += 1) {
      items[index] = build(
        this.items[slot] as T,
        first + index,
        this.stamps[slot] as number,
        this.tags[slot] as number,
      )
      this.items[slot] = undefined
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
