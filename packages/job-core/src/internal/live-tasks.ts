/** The links a task carries to sit in {@link LiveTasks}. */
export interface LiveLinks<T extends LiveLinks<T>> {
  livePrev: T | undefined
  liveNext: T | undefined
}

/**
 * The runtime's non-terminal tasks, in creation order, as an intrusive
 * doubly linked list: adding and removing a task allocates nothing and hashes
 * nothing, which matters when every call is a task. A removed task keeps its
 * `liveNext`, so an iteration standing on it when it ends can go on.
 */
export class LiveTasks<T extends LiveLinks<T>> {
  private head: T | undefined
  private tail: T | undefined
  private count = 0

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
    this.count--
  }

  *values(): IterableIterator<T> {
    for (let task = this.head; task !== undefined; task = task.liveNext) {
      // Skip tasks removed while the iteration stood on a predecessor.
      if (task.livePrev !== undefined || task === this.head) yield task
    }
  }

  /** A snapshot, for loops that end tasks as they go. */
  toArray(): T[] {
    const tasks: T[] = []
    for (let task = this.head; task !== undefined; task = task.liveNext) tasks.push(task)
    return tasks
  }
}
