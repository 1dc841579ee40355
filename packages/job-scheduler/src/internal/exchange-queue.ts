import { RingQueue } from './ring-queue.js'

/** Consecutive queued exchanges that share one tag (their aggregate's counters). */
interface Run<K> {
  readonly tag: K
  count: number
}

/**
 * A block of consecutive queue slots: exchanges and their enqueue times,
 * column-wise (a plain array of numbers keeps doubles unboxed).
 */
interface Segment<T> {
  readonly values: (T | undefined)[]
  readonly times: number[]
  next: Segment<T> | undefined
}

// A group that holds a few exchanges (the usual case) allocates one small
// segment; a backlog adds segments of doubling size up to this cap.
const FIRST_SEGMENT = 8
const MAX_SEGMENT = 4096

function segment<T>(capacity: number): Segment<T> {
  return {
    values: new Array<T | undefined>(capacity),
    times: new Array<number>(capacity),
    next: undefined,
  }
}

/**
 * The FIFO of a dispatcher group: each exchange with its enqueue time and a
 * tag (its named aggregate's counters). A queued exchange costs an array
 * slot and an unboxed double, not an entry object and a list node. Slots
 * live in a chain of segments, so a backlog of any size grows without ever
 * copying what is queued (a ring that doubles copies all of it, and a large
 * one lands in the large-object space). Tags are run-length encoded: a
 * group's exchanges almost always belong to a few aggregate types, so a tag
 * is stored once per run of equal tags, not once per exchange.
 */
export class ExchangeQueue<T, K> {
  private head: Segment<T> = segment<T>(FIRST_SEGMENT)
  private tail: Segment<T> = this.head
  /** Next slot to read in `head`, next slot to write in `tail`. */
  private readAt = 0
  private writeAt = 0
  // The last segment that emptied, kept for the next one the queue needs:
  // a group with a steady backlog reuses two segments instead of allocating.
  private spare: Segment<T> | undefined = undefined
  private readonly runs: RingQueue<Run<K>> = new RingQueue<Run<K>>()
  private lastRun: Run<K> | undefined = undefined
  size = 0

  push(value: T, tag: K, time: number): void {
    let tail = this.tail
    if (this.writeAt === tail.values.length) tail = this.append(tail)
    const at = this.writeAt++
    tail.values[at] = value
    tail.times[at] = time
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
    return this.head.times[this.readAt] as number
  }

  /** Removes the oldest exchange; read its tag and time first. */
  shift(): T | undefined {
    if (this.size === 0) return undefined
    const head = this.head
    const at = this.readAt
    const value = head.values[at]
    // Cleared so that a handled exchange is not kept alive by its old slot.
    head.values[at] = undefined
    this.size--
    if (this.size === 0) {
      // Empty: start over at the front of the head segment (a group that
      // comes and goes never walks past its first segment).
      this.readAt = 0
      this.writeAt = 0
      this.tail = head
      head.next = undefined
    } else if (at + 1 === head.values.length) {
      this.head = head.next as Segment<T>
      this.readAt = 0
      head.next = undefined
      this.spare = head
    } else {
      this.readAt = at + 1
    }
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

  private append(tail: Segment<T>): Segment<T> {
    const capacity = Math.min(tail.values.length * 2, MAX_SEGMENT)
    const spare = this.spare
    let next: Segment<T>
    if (spare !== undefined && spare.values.length >= capacity) {
      this.spare = undefined
      next = spare
    } else {
      next = segment<T>(capacity)
    }
    tail.next = next
    this.tail = next
    this.writeAt = 0
    return next
  }
}
