/**
 * Entries already in queue order (highest priority first, then earliest
 * arrival), taken from the front: a FIFO whose entries carry their keys.
 *
 * An entry joins at the back only if it belongs there (its priority is not
 * above the last one's: it arrived last, so it ties the order otherwise);
 * a batch of others joins by {@link SortedRun.merge}. Taking the front is
 * O(1) and walks memory in order, which is what makes a queue drained in
 * bulk cheap however random its priorities were.
 */
export class SortedRun<T> {
  private items: (T | undefined)[] = []
  private priorities: number[] = []
  private arrivals: number[] = []
  private head = 0

  /** Entries not yet taken. */
  get length(): number {
    return this.items.length - this.head
  }

  /** The front entry's priority; only while `length > 0`. */
  get frontPriority(): number {
    return this.priorities[this.head] as number
  }

  /** The front entry's arrival; only while `length > 0`. */
  get frontArrival(): number {
    return this.arrivals[this.head] as number
  }

  /** Whether an entry of `priority`, arriving now, may join at the back. */
  fits(priority: number): boolean {
    const n = this.items.length
    return n === this.head || priority <= (this.priorities[n - 1] as number)
  }

  /** Adds an entry at the back; the caller checked {@link SortedRun.fits}. */
  push(item: T, priority: number, arrival: number): void {
    this.items.push(item)
    this.priorities.push(priority)
    this.arrivals.push(arrival)
  }

  /** Removes and returns the front entry, or `undefined` when empty. */
  shift(): T | undefined {
    const head = this.head
    const items = this.items
    if (head === items.length) return undefined
    const item = items[head]
    items[head] = undefined
    this.head = head + 1
    // Reclaim the taken prefix once it dominates, so memory follows the live size.
    if (head + 1 === items.length) this.clear()
    else if (head >= 1024 && 2 * head >= items.length) {
      this.items = items.slice(head + 1)
      this.priorities = this.priorities.slice(head + 1)
      this.arrivals = this.arrivals.slice(head + 1)
      this.head = 0
    }
    return item
  }

  /**
   * Merges a batch into the run: `order` lists the indices of the parallel
   * arrays `items`, `priorities`, `arrivals` in queue order (see
   * `queueOrder`). O(length + batch).
   */
  merge(
    items: readonly T[],
    priorities: readonly number[],
    arrivals: readonly number[],
    order: Uint32Array,
  ): void {
    const oldItems = this.items
    const oldPriorities = this.priorities
    const oldArrivals = this.arrivals
    const end = oldItems.length
    const total = end - this.head + order.length
    // Sized up front: filled in order, never grown.
    const nextItems = new Array<T>(total)
    const nextPriorities = new Array<number>(total)
    const nextArrivals = new Array<number>(total)
    let i = this.head
    let out = 0
    for (let k = 0; k < order.length; k++) {
      const at = order[k] as number
      const priority = priorities[at] as number
      const arrival = arrivals[at] as number
      // Run entries that come before the batch's next one go first.
      while (i < end) {
        const runPriority = oldPriorities[i] as number
        if (
          runPriority < priority ||
          (runPriority === priority && (oldArrivals[i] as number) > arrival)
        ) {
          break
        }
        nextItems[out] = oldItems[i] as T
        nextPriorities[out] = runPriority
        nextArrivals[out] = oldArrivals[i] as number
        out++
        i++
      }
      nextItems[out] = items[at] as T
      nextPriorities[out] = priority
      nextArrivals[out] = arrival
      out++
    }
    for (; i < end; i++, out++) {
      nextItems[out] = oldItems[i] as T
      nextPriorities[out] = oldPriorities[i] as number
      nextArrivals[out] = oldArrivals[i] as number
    }
    this.items = nextItems
    this.priorities = nextPriorities
    this.arrivals = nextArrivals
    this.head = 0
  }

  /** Keeps only the entries `keep` accepts, in order. O(length). */
  retain(keep: (item: T) => boolean): void {
    this.compact(keep)
  }

  /**
   * Where the entry that would come out last among those `live` accepts sits
   * (the lowest priority, and within it the earliest arrival), or -1. Walks
   * back from the end only as far as that priority reaches.
   */
  lowest(live: (item: T) => boolean): number {
    const { items, priorities } = this
    let found = -1
    for (let i = items.length - 1; i >= this.head; i--) {
      if (found !== -1 && (priorities[i] as number) !== (priorities[found] as number)) break
      if (live(items[i] as T)) found = i
    }
    return found
  }

  /** The entry at `index` (as {@link SortedRun.lowest} returns it). */
  itemAt(index: number): T {
    return this.items[index] as T
  }

  priorityAt(index: number): number {
    return this.priorities[index] as number
  }

  arrivalAt(index: number): number {
    return this.arrivals[index] as number
  }

  /** Drops every entry. */
  clear(): void {
    this.items = []
    this.priorities = []
    this.arrivals = []
    this.head = 0
  }

  private compact(keep: (item: T) => boolean): void {
    const items: T[] = []
    const priorities: number[] = []
    const arrivals: number[] = []
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i] as T
      if (!keep(item)) continue
      items.push(item)
      priorities.push(this.priorities[i] as number)
      arrivals.push(this.arrivals[i] as number)
    }
    this.items = items
    this.priorities = priorities
    this.arrivals = arrivals
    this.head = 0
  }
}
