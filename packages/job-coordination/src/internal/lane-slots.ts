import type { Task } from '@vega/job-core'

/**
 * Up to this many slots per lane are kept in an array; more in a `Set`.
 * A scan of a handful of entries costs less than a `Set` whose table the
 * engine rebuilds as entries come and go (one per call on a busy lane);
 * past this, a scan per exit would grow with the lane's concurrency.
 */
const SCANNED_SLOTS = 16

/**
 * The calls holding one lane's slots, by task: in at admission, out at exit.
 * The lane's concurrency, fixed when the lane is made, chooses the storage
 * once, so every call of the lane takes the same path.
 */
export class LaneSlots {
  /** The holders when the lane allows at most {@link SCANNED_SLOTS}; else `undefined`. */
  private readonly few: Task<unknown>[] | undefined
  /** The holders when the lane allows more; else `undefined`. */
  private readonly many: Set<Task<unknown>> | undefined

  constructor(concurrency: number) {
    if (concurrency <= SCANNED_SLOTS) this.few = []
    else this.many = new Set()
  }

  get size(): number {
    return this.few !== undefined ? this.few.length : this.many!.size
  }

  add(task: Task<unknown>): void {
    if (this.few !== undefined) this.few.push(task)
    else this.many!.add(task)
  }

  /** Frees `task`'s slot; `false` when it holds none (it never was admitted, or left already). */
  delete(task: Task<unknown>): boolean {
    const few = this.few
    if (few === undefined) return this.many!.delete(task)
    const at = few.indexOf(task)
    if (at === -1) return false
    // Order among holders means nothing: the last one fills the gap.
    const last = few.pop()!
    if (at < few.length) few[at] = last
    return true
  }

  /** The holders, as a copy. */
  toArray(): Task<unknown>[] {
    return this.few !== undefined ? [...this.few] : [...this.many!]
  }
}
