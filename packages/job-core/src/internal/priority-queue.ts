import { ArrayQueue } from './array-queue.js'
import { BinaryHeap } from './binary-heap.js'

/** Withdrawn entries tolerated before a sweep, however few are live. */
const SWEEP_FLOOR = 64

/**
 * The default backend's waiting line: highest priority first, FIFO within a
 * priority, lazy removal.
 *
 * While everything queued shares one priority (the common case: nobody passes
 * `priority`) entries sit in a plain FIFO. The first entry with another
 * priority moves them into a {@link BinaryHeap} (each moves once, in order, at
 * O(1) since they tie), which serves until it runs empty; then the FIFO takes
 * over again. Both paths are O(log n) or better per entry, whatever the number
 * of distinct priorities.
 *
 * `remove` only marks an entry; marked entries are skipped when they reach the
 * front, and swept out once they outnumber the live ones (and exceed
 * {@link SWEEP_FLOOR}), or all at once when nothing live remains: dead weight
 * never exceeds max(64, live size).
 */
export class PriorityQueue<T> {
  private readonly fifo = new ArrayQueue<T>()
  // The priority every FIFO entry has; meaningless while the FIFO is empty.
  private fifoPriority = 0
  private readonly heap = new BinaryHeap<T>()
  private readonly removed = new Set<T>()
  // removed.size, kept as a plain field for the hot path.
  private stale = 0
  private live = 0

  /** Entries waiting (removed ones not counted). */
  get size(): number {
    return this.live
  }

  /** Entries held, removed ones included: the memory the queue keeps. */
  get stored(): number {
    return this.fifo.length + this.heap.size
  }

  push(item: T, priority: number): void {
    // A removed item coming back must not revive its stale entry further ahead.
    if (this.stale > 0 && this.removed.has(item)) this.sweep()
    if (this.heap.size > 0) this.heap.push(item, priority)
    else if (this.fifo.length === 0) {
      this.fifoPriority = priority
      this.fifo.push(item)
    } else if (priority === this.fifoPriority) this.fifo.push(item)
    else {
      this.spill()
      this.heap.push(item, priority)
    }
    this.live++
  }

  /** Removes and returns the first live entry, or `undefined` when none waits. */
  shift(): T | undefined {
    while (this.live > 0) {
      const item = (this.heap.size > 0 ? this.heap.pop() : this.fifo.shift()) as T
      if (this.stale > 0 && this.removed.delete(item)) {
        this.stale--
        continue
      }
      this.live--
      if (this.stale > 0) this.settle()
      return item
    }
    return undefined
  }

  /** The longest-waiting live entry of the lowest priority (what `drop-oldest` drops), or `undefined`. O(n). */
  lowest(): T | undefined {
    const live = (item: T) => this.stale === 0 || !this.removed.has(item)
    return this.heap.size > 0 ? this.heap.last(live) : this.fifo.find(live)
  }

  /**
   * Marks a waiting entry removed. The caller guarantees `item` was pushed and
   * not yet shifted; removing it twice is a no-op.
   */
  remove(item: T): void {
    if (this.live === 0 || this.removed.has(item)) return
    this.live--
    this.removed.add(item)
    this.stale++
    this.settle()
  }

  // Keeps dead weight bounded: none once nothing is live, at most
  // max(SWEEP_FLOOR, live) otherwise. Each sweep removes more entries than it
  // keeps, so its cost is paid for by the removals it clears.
  private settle(): void {
    if (this.live === 0) this.clear()
    else if (this.stale > SWEEP_FLOOR && this.stale > this.live) this.sweep()
  }

  // The FIFO's entries, all of one priority, move into the heap in order.
  private spill(): void {
    const fifo = this.fifo
    const priority = this.fifoPriority
    for (let item = fifo.shift(); item !== undefined; item = fifo.shift()) {
      if (this.stale > 0 && this.removed.delete(item)) {
        this.stale--
        continue
      }
      this.heap.push(item, priority)
    }
  }

  private sweep(): void {
    const removed = this.removed
    const keep = (item: T) => !removed.has(item)
    this.fifo.retain(keep)
    this.heap.retain(keep)
    removed.clear()
    this.stale = 0
  }

  // Nothing live: every entry held is a removed one.
  private clear(): void {
    this.fifo.clear()
    this.heap.clear()
    this.removed.clear()
    this.stale = 0
  }
}
