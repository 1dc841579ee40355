/** The links a task carries to sit in {@link LiveTasks}. */
export interface LiveLinks<T extends LiveLinks<T>> {
  livePrev: T | undefined
  liveNext: T | undefined
}

/**
 * The runtime's non-terminal tasks, in creation order, as an intrusive
 * doubly linked list: adding and removing a task allocates nothing and hashes
 * nothing, which matters when every call is a task.
 *
 * A removed task drops both links, unless an iteration is under way (then it
 * keeps `liveNext`, so an iteration standing on it can go on). A kept link
 * from an ended task to the next one would chain every ended task of a burst
 * to the live ones: once one ended task sits in the old generation, the
 * scavenger keeps every later task alive through that chain and promotes
 * it, and a burst of merged calls costs a copy of each and a full collection.
 */
export class LiveTasks<T extends LiveLinks<T>> {
  private head: T | undefined
  private tail: T | undefined
  private count = 0
  /** Iterations in progress (`values()` generators not yet finished). */
  private iterating = 0

  get size(): number {
    return this.count
  }

  add(task: T): void {
    task.livePrev = this.tail
    task.liveNext = undefined
    if (this.tail === undefined) this.head = task
    else this.tail.liveNext = task
    this.tail = task
    this.count++
  }

  delete(task: T): void {
    const { livePrev, liveNext } = task
    if (livePrev === undefined) {
      if (this.head !== task) return
      this.head = liveNext
    } else {
      livePrev.liveNext = liveNext
    }
    if (liveNext === undefined) this.tail = livePrev
    else liveNext.livePrev = livePrev
    task.livePrev = undefined
    if (this.iterating === 0) task.liveNext = undefined
    this.count--
  }

  *values(): IterableIterator<T> {
    this.iterating++
    try {
      for (let task = this.head; task !== undefined; task = task.liveNext) {
        // Skip tasks removed while the iteration stood on a predecessor.
        if (task.livePrev !== undefined || task === this.head) yield task
      }
    } finally {
      this.iterating--
    }
  }

  /** A snapshot, for loops that end tasks as they go. */
  toArray(): T[] {
    const tasks: T[] = []
    for (let task = this.head; task !== undefined; task = task.liveNext) tasks.push(task)
    return tasks
  }
}
