import { RingQueue } from './ring-queue.js'

/** Consecutive queued exchanges that share one tag (their aggregate's counters). */
interface Run<K> {
  readonly tag: K
  count: number
}

/**
 * The FIFO of a dispatcher group: each exchange with its enqueue time and a
 * tag (its named aggregate's counters). Stored column-wise in one ring, so a
 * queued exchange costs an array slot and 8 bytes of `Float64Array`, not an
 * entry object, a boxed number and a list node. Tags are run-length encoded:
 * a group's exchanges almost always belong to a few aggregate types, so a tag
 * is stored once per run of equal tags, not once per exchange.
 */
export class ExchangeQueue<T, K> {
  private values: (T | undefined)[] = new Array<T | undefined>(4)
  private times: Float64Array = new Float64Array(4)
  private readonly runs: RingQueue<Run<K>> = new RingQueue<Run<K>>()
  private lastRun: Run<K> | undefined = undefined
  private mask = 3
  private head = 0
  size = 0

  push(value: T, tag: K, time: number): void {
    if (this.size > this.mask) this.grow()
    const at = (this.head + this.size) & this.mask
    this.values[at] = value
    this.times[at] = time
    this.size++
    const last = this.lastRun
    if (last !== undefined && last.count > 0 && last.tag === tag) {
      last.count++
    } else {
      const run: Run<K> = { tag, count: 1 }
      this.runs.push(run)
      this.lastRun = run
    }
  }

  /** The tag of the oldest exchange; only while `size > 0`. */
  headTag(): K {
    return (this.runs.peek() as Run<K>).tag
  }

  /** The enqueue time of the oldest exchange; only while `size > 0`. */
  headTime(): number {
    return this.times[this.head] as number
  }

  /** Removes the oldest exchange; read its tag and time first. */
  shift(): T | undefined {
    if (this.size === 0) return undefined
    const value = this.values[this.head]
    this.values[this.head] = undefined
    this.head = (this.head + 1) & this.mask
    this.size--
    const run = this.runs.peek() as Run<K>
    // A run emptied here is never extended again (count 0 is checked in push).
    if (--run.count === 0) this.runs.shift()
    return value
  }

  /** Empties the queue and calls `visit` with each exchange's tag and value, oldest first. */
  drain(visit: (tag: K, value: T) => void): void {
    while (this.size > 0) {
      const tag = this.headTag()
      visit(tag, this.shift() as T)
    }
  }

  // Doubling keeps the capacity a power of two, so indexes wrap with a mask.
  // Called only when full: the ring is [head, capacity) then [0, head). Both
  // columns grow in place with one native copy each (setting an array's
  // length reallocates its store; a typed array is copied with set), then
  // the wrapped part [0, head) moves to [capacity, capacity + head), so the
  // head stays where it is. In a burst the wrapped part is a slot or two.
  private grow(): void {
    const capacity = this.values.length
    const head = this.head
    const values = this.values
    values.length = capacity * 2
    for (let i = 0; i < head; i++) {
      values[capacity + i] = values[i]
      values[i] = undefined
    }
    const times = new Float64Array(capacity * 2)
    times.set(this.times)
    times.copyWithin(capacity, 0, head)
    this.times = times
    this.mask = capacity * 2 - 1
  }
}
