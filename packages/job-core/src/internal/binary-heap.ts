/**
 * A binary max-heap over (priority, arrival): `pop` returns the entry with the
 * highest priority, and among equal priorities the one pushed first. O(log n)
 * push and pop, whatever the number of distinct priorities.
 *
 * Entries live in three parallel arrays rather than one object each, so a
 * queued entry costs no allocation and sifting moves plain values.
 */
export class BinaryHeap<T> {
  private items: T[] = []
  private priorities: number[] = []
  // Arrival order within the heap, the tie-break that keeps equal priorities FIFO.
  private arrivals: number[] = []
  private nextArrival = 0
  // The largest size since the arrays were last replaced (see `reset`).
  private peak = 0

  get size(): number {
    return this.items.length
  }

  push(item: T, priority: number): void {
    const { items, priorities, arrivals } = this
    const arrival = this.nextArrival++
    let i = items.length
    if (i >= this.peak) this.peak = i + 1
    // Sift up with a hole: move parents down until the new entry's place is found.
    items.push(item)
    priorities.push(priority)
    arrivals.push(arrival)
    while (i > 0) {
      const parent = (i - 1) >> 1
      const parentPriority = priorities[parent] as number
      if (
        parentPriority > priority ||
        (parentPriority === priority && (arrivals[parent] as number) < arrival)
      ) {
        break
      }
      items[i] = items[parent] as T
      priorities[i] = parentPriority
      arrivals[i] = arrivals[parent] as number
      i = parent
    }
    items[i] = item
    priorities[i] = priority
    arrivals[i] = arrival
  }

  /** Removes and returns the first entry, or `undefined` when empty. */
  pop(): T | undefined {
    const { items, priorities, arrivals } = this
    const n = items.length
    if (n === 0) return undefined
    const top = items[0] as T
    // Popping the last slot keeps no reference behind; its entry then sinks from the root.
    const item = items.pop() as T
    const priority = priorities.pop() as number
    const arrival = arrivals.pop() as number
    if (n === 1) {
      this.reset()
      return top
    }
    this.siftDown(0, item, priority, arrival)
    return top
  }

  /** Keeps only the entries `keep` accepts; their order is unchanged. O(n). */
  retain(keep: (item: T) => boolean): void {
    const { items, priorities, arrivals } = this
    let kept = 0
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as T
      if (!keep(item)) continue
      items[kept] = item
      priorities[kept] = priorities[i] as number
      arrivals[kept] = arrivals[i] as number
      kept++
    }
    items.length = kept
    priorities.length = kept
    arrivals.length = kept
    if (kept === 0) {
      this.reset()
      return
    }
    // Floyd's heapify: sink every parent, deepest first.
    for (let i = (kept >> 1) - 1; i >= 0; i--) {
      this.siftDown(i, items[i] as T, priorities[i] as number, arrivals[i] as number)
    }
  }

  /**
   * The entry that would come out last among those `live` accepts: the lowest
   * priority, and within it the earliest arrival. O(n); for rare callers
   * (dropping the oldest of the lowest on overflow).
   */
  last(live: (item: T) => boolean): T | undefined {
    const { items, priorities, arrivals } = this
    let found = -1
    for (let i = 0; i < items.length; i++) {
      if (!live(items[i] as T)) continue
      if (
        found === -1 ||
        (priorities[i] as number) < (priorities[found] as number) ||
        ((priorities[i] as number) === (priorities[found] as number) &&
          (arrivals[i] as number) < (arrivals[found] as number))
      ) {
        found = i
      }
    }
    return found === -1 ? undefined : items[found]
  }

  /** Drops every entry. */
  clear(): void {
    this.items.length = 0
    this.priorities.length = 0
    this.arrivals.length = 0
    this.reset()
  }

  private siftDown(start: number, item: T, priority: number, arrival: number): void {
    const { items, priorities, arrivals } = this
    const n = items.length
    let i = start
    for (;;) {
      let child = 2 * i + 1
      if (child >= n) break
      let childPriority = priorities[child] as number
      const right = child + 1
      if (right < n) {
        const rightPriority = priorities[right] as number
        if (
          rightPriority > childPriority ||
          (rightPriority === childPriority &&
            (arrivals[right] as number) < (arrivals[child] as number))
        ) {
          child = right
          childPriority = rightPriority
        }
      }
      if (
        priority > childPriority ||
        (priority === childPriority && arrival < (arrivals[child] as number))
      ) {
        break
      }
      items[i] = items[child] as T
      priorities[i] = childPriority
      arrivals[i] = arrivals[child] as number
      i = child
    }
    items[i] = item
    priorities[i] = priority
    arrivals[i] = arrival
  }

  // Empty: arrivals restart at 0 (they only order entries present together),
  // and arrays that once held many entries are replaced so their capacity goes.
  private reset(): void {
    this.nextArrival = 0
    if (this.peak > 1024) {
      this.items = []
      this.priorities = []
      this.arrivals = []
    }
    this.peak = 0
  }
}
