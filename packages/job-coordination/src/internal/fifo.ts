/**
 * A first-in, first-out queue over an array with a moving head: push and
 * shift cost no allocation per entry (a parked call is queued as itself,
 * with no node around it), and the array is cut down once most of it lies
 * behind the head, so a long-lived queue does not keep what it let go.
 * Entries are never removed one by one from the middle: a queue that must
 * forget one early counts it out, skips it when it reaches it, and cuts
 * itself down with `retain` once most of it has left (see `key-lanes.ts`).
 */
export class Fifo<T> {
  private items: (T | undefined)[] = []
  private head = 0

  get length(): number {
    return this.items.length - this.head
  }

  push(item: T): void {
    this.items.push(item)
  }

  shift(): T | undefined {
    if (this.head === this.items.length) return undefined
    const item = this.items[this.head]
    this.items[this.head] = undefined
    this.head++
    if (this.head === this.items.length) {
      this.items.length = 0
      this.head = 0
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
    return item
  }

  /** The entries still queued, first first (a copy). */
  toArray(): T[] {
    return this.items.slice(this.head) as T[]
  }

  /** Keeps only the entries `keep` accepts, in order. */
  retain(keep: (item: T) => boolean): void {
    this.items = this.toArray().filter(keep)
    this.head = 0
  }

  clear(): void {
    this.items = []
    this.head = 0
  }
}
