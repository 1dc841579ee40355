import { BinaryHeap } from './binary-heap.js'
import { queueOrder } from './queue-order.js'
import { SortedRun } from './sorted-run.js'

/** Below this many, a batch is cheaper to sift into the heap than to sort. */
const SORT_FLOOR = 128

/**
 * Entries of mixed priorities in queue order: highest priority first, FIFO
 * within a priority. Three parts, each ordered its own way, and `pop` takes
 * the better of the two fronts:
 *
 * - a {@link SortedRun}: entries already in order. An entry that belongs at
 *   its back (not above the last priority: a FIFO of one priority, deadlines
 *   in arrival order) joins it in O(1);
 * - a batch of the other entries pushed since the last `pop`, in arrival
 *   order, not yet ordered at all;
 * - a {@link BinaryHeap}.
 *
 * `pop` first places the batch: a batch at least as long as what the run
 * still holds (and over {@link SORT_FLOOR}) is radix-sorted in O(m) and merged
 * into the run, copying no more run entries than it brings; a smaller one is
 * sifted into the heap, O(log n) each. So push is O(1), pop amortised
 * O(log n), and a queue filled in a burst and then drained (many `run()`
 * calls, few slots) is drained from one array, in order, instead of by
 * sifting through a heap at random.
 */
export class PriorityOrder<T> {
  private readonly run = new SortedRun<T>()
  private readonly heap = new BinaryHeap<T>()
  private batchItems: T[] = []
  private batchPriorities: number[] = []
  private batchArrivals: number[] = []
  // Arrival numbers order entries present together; they restart when the order empties.
  private nextArrival = 0

  get size(): number {
    return this.run.length + this.batchItems.length + this.heap.size
  }

  push(item: T, priority: number): void {
    const arrival = this.nextArrival++
    if (this.run.fits(priority)) this.run.push(item, priority, arrival)
    else {
      this.batchItems.push(item)
      this.batchPriorities.push(priority)
      this.batchArrivals.push(arrival)
    }
  }

  /** Removes and returns the first entry, or `undefined` when empty. */
  pop(): T | undefined {
    if (this.batchItems.length > 0) this.placeBatch()
    const { run, heap } = this
    let item: T | undefined
    if (heap.size === 0) item = run.shift()
    else if (run.length === 0 || this.heapFirst()) item = heap.pop()
    else item = run.shift()
    if (run.length === 0 && heap.size === 0) this.nextArrival = 0
    return item
  }

  /** Keeps only the entries `keep` accepts; their order is unchanged. O(n). */
  retain(keep: (item: T) => boolean): void {
    this.run.retain(keep)
    this.heap.retain(keep)
    const items: T[] = []
    const priorities: number[] = []
    const arrivals: number[] = []
    for (let i = 0; i < this.batchItems.length; i++) {
      const item = this.batchItems[i] as T
      if (!keep(item)) continue
      items.push(item)
      priorities.push(this.batchPriorities[i] as number)
      arrivals.push(this.batchArrivals[i] as number)
    }
    this.batchItems = items
    this.batchPriorities = priorities
    this.batchArrivals = arrivals
    if (this.size === 0) this.nextArrival = 0
  }

  /**
   * The entry that would come out last among those `live` accepts: the lowest
   * priority, and within it the earliest arrival. O(n); for rare callers
   * (dropping the oldest of the lowest on overflow).
   */
  last(live: (item: T) => boolean): T | undefined {
    const { run, heap } = this
    let found: T | undefined
    let priority = 0
    let arrival = 0
    const consider = (item: T, p: number, a: number) => {
      if (found === undefined || p < priority || (p === priority && a < arrival)) {
        found = item
        priority = p
        arrival = a
      }
    }
    const inRun = run.lowest(live)
    if (inRun !== -1) consider(run.itemAt(inRun), run.priorityAt(inRun), run.arrivalAt(inRun))
    const inHeap = heap.lowest(live)
    if (inHeap !== -1) {
      consider(heap.itemAt(inHeap), heap.priorityAt(inHeap), heap.arrivalAt(inHeap))
    }
    for (let i = 0; i < this.batchItems.length; i++) {
      const item = this.batchItems[i] as T
      if (live(item)) {
        consider(item, this.batchPriorities[i] as number, this.batchArrivals[i] as number)
      }
    }
    return found
  }

  /** Drops every entry. */
  clear(): void {
    this.run.clear()
    this.heap.clear()
    this.batchItems = []
    this.batchPriorities = []
    this.batchArrivals = []
    this.nextArrival = 0
  }

  // Whether the heap's first entry comes before the run's; both non-empty.
  private heapFirst(): boolean {
    const heapPriority = this.heap.topPriority
    const runPriority = this.run.frontPriority
    return (
      heapPriority > runPriority ||
      (heapPriority === runPriority && this.heap.topArrival < this.run.frontArrival)
    )
  }

  private placeBatch(): void {
    const items = this.batchItems
    const priorities = this.batchPriorities
    const arrivals = this.batchArrivals
    this.batchItems = []
    this.batchPriorities = []
    this.batchArrivals = []
    if (items.length >= SORT_FLOOR && items.length >= this.run.length) {
      this.run.merge(items, priorities, arrivals, queueOrder(priorities))
      return
    }
    for (let i = 0; i < items.length; i++) {
      this.heap.push(items[i] as T, priorities[i] as number, arrivals[i] as number)
    }
  }
}
