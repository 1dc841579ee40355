/**
 * A FIFO in a growable array ring. Queues that never withdraw from the
 * middle (scheduler lanes, the backend's forwarding order) use it: a queued
 * value costs one array slot, not a node object, and `Array#shift` (O(n))
 * is never used.
 */
export class RingQueue<T> {
  private items: (T | undefined)[] = new Array<T | undefined>(8)
  private mask = 7
  private head = 0
  size = 0

  push(value: T): void {
    if (this.size > this.mask) this.grow()
    this.items[(this.head + this.size) & this.mask] = value
    this.size++
  }

  /** The oldest value, left in place. */
  peek(): T | undefined {
    return this.size === 0 ? undefined : this.items[this.head]
  }

  shift(): T | undefined {
    if (this.size === 0) return undefined
    const value = this.items[this.head]
    // Cleared so that a settled value is not kept alive by its old slot.
    this.items[this.head] = undefined
    this.head = (this.head + 1) & this.mask
    this.size--
    return value
  }

  /** Empties the queue and returns what it held, oldest first. */
  drain(): T[] {
    const values: T[] = []
    for (let value = this.shift(); value !== undefined; value = this.shift()) values.push(value)
    return values
  }

  // Doubling keeps the capacity a power of two, so indexes wrap with a mask.
  private grow(): void {
    const capacity = this.items.length
    const items = new Array<T | undefined>(capacity * 2)
    for (let i = 0; i < this.size; i++) items[i] = this.items[(this.head + i) & this.mask]
    this.items = items
    this.mask = capacity * 2 - 1
    this.head = 0
  }
}
