/**
 * A FIFO over an array with a moving head: O(1) amortised push and shift,
 * no per-entry allocation. Removal is lazy (see PriorityQueue): callers
 * skip removed entries when they reach the head.
 */
export class ArrayQueue<T> {
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
    this.items[this.head++] = undefined
    // Reclaim the consumed prefix once it dominates, so memory follows the live size.
    if (this.head === this.items.length) {
      this.items = []
      this.head = 0
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
    return item
  }

  /** Drops every entry. */
  clear(): void {
    this.items = []
    this.head = 0
  }

  /** Keeps only the entries `keep` accepts, in order. */
  retain(keep: (item: T) => boolean): void {
    const kept: T[] = []
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i] as T
      if (keep(item)) kept.push(item)
    }
    this.items = kept
    this.head = 0
  }

  /** The first entry, from the head, that `match` accepts. */
  find(match: (item: T) => boolean): T | undefined {
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i] as T
      if (match(item)) return item
    }
    return undefined
  }
}
