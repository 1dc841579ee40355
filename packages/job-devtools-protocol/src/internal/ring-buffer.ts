/** A contiguous range of seqs that will never be delivered, and why. */
export interface LostRange {
  readonly fromSeq: number
  readonly toSeq: number
  readonly reason: string
}

/**
 * A bounded FIFO of envelopes waiting to be flushed. When full, a push drops
 * the oldest and remembers the dropped seqs as one range: drops always take
 * the oldest, so the range stays contiguous until the next drain.
 */
export class RingBuffer<T extends { readonly seq: number }> {
  private readonly slots: (T | undefined)[]
  private head = 0
  private count = 0
  private lost: LostRange | undefined

  constructor(readonly capacity: number) {
    this.slots = new Array<T | undefined>(capacity)
  }

  get size(): number {
    return this.count
  }

  push(item: T): void {
    if (this.count === this.capacity) {
      const oldest = this.slots[this.head] as T
      this.slots[this.head] = undefined
      this.head = (this.head + 1) % this.capacity
      this.count -= 1
      this.markLost(oldest.seq, oldest.seq, 'overflow')
    }
    this.slots[(this.head + this.count) % this.capacity] = item
    this.count += 1
  }

  /** Records seqs lost elsewhere (a failed send), merged with any pending range. */
  markLost(fromSeq: number, toSeq: number, reason: string): void {
    this.lost =
      this.lost === undefined
        ? { fromSeq, toSeq, reason }
        : {
            fromSeq: Math.min(this.lost.fromSeq, fromSeq),
            toSeq: Math.max(this.lost.toSeq, toSeq),
            reason: this.lost.reason,
          }
  }

  /** Empties the buffer: the lost range (if any) and the items, oldest first. */
  drain(): { readonly lost: LostRange | undefined; readonly items: T[] } {
    const items: T[] = []
    for (let index = 0; index < this.count; index += 1) {
      const slot = (this.head + index) % this.capacity
      items.push(this.slots[slot] as T)
      this.slots[slot] = undefined
    }
    const lost = this.lost
    this.head = 0
    this.count = 0
    this.lost = undefined
    return { lost, items }
  }
}
