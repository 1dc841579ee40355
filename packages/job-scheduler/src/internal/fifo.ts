/**
 * A consumed front at least this long, and at least as long as what is
 * still queued, is cut away (see {@link Fifo}).
 */
const COMPACT_AT = 4096

/**
 * The package's first-in, first-out queue: scheduler lanes, the aggregate
 * backend's forwarding order, and (through {@link GroupQueue}) every
 * ordering group's waiting work.
 *
 * The values are one array that grows by `push` and is read from a moving
 * `head`: a queued value costs one array slot, not a node object; the
 * engine grows the array natively (a ring grown slot by slot from
 * JavaScript pays a write barrier per slot, which a burst of admissions
 * into one group feels); and `Array#shift`, which moves every value, is
 * never used.
 *
 * The array starts over whenever the queue empties. A queue that never
 * empties cuts its consumed front away once that front is long and at
 * least half of the array, so it holds at most about twice its size.
 */
export class Fifo<T> {
  private values: (T | undefined)[] = []
  /** Where the oldest queued value is: slots before it are consumed (cleared). */
  private head = 0

  get size(): number {
    return this.values.length - this.head
  }

  /** Slots held now: the queued values plus a consumed front not yet cut away. */
  get slots(): number {
    return this.values.length
  }

  push(value: T): void {
    this.values.push(value)
  }

  /** The oldest value, left in place. */
  peek(): T | undefined {
    return this.head < this.values.length ? this.values[this.head] : undefined
  }

  /** The newest value, left in place. */
  peekLast(): T | undefined {
    return this.head < this.values.length ? this.values[this.values.length - 1] : undefined
  }

  shift(): T | undefined {
    const values = this.values
    const head = this.head
    if (head >= values.length) return undefined
    const value = values[head]
    if (head + 1 === values.length) {
      // Emptied: truncation keeps no slot alive.
      values.length = 0
      this.head = 0
      return value
    }
    // Cleared so that a value already handed out is not kept alive by its old slot.
    values[head] = undefined
    const consumed = head + 1
    this.head = consumed
    if (consumed >= COMPACT_AT && consumed >= values.length - consumed) this.compact()
    return value
  }

  /** Empties the queue and returns what it held, oldest first. */
  drain(): T[] {
    const drained = this.values.slice(this.head) as T[]
    this.values.length = 0
    this.head = 0
    return drained
  }

  // The consumed front is at least half of the array: one native move.
  private compact(): void {
    this.values.splice(0, this.head)
    this.head = 0
  }
}
