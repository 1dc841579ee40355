/** A node of {@link LinkedQueue}; kept by callers that need O(1) removal. */
export interface QueueNode<T> {
  readonly value: T
  prev: QueueNode<T> | undefined
  next: QueueNode<T> | undefined
  linked: boolean
}

/**
 * A doubly linked FIFO. Hot paths (scheduler lanes, group queues) use it
 * instead of `Array#shift`, which is O(n), and withdrawing a waiting job must
 * not scan its group.
 */
export class LinkedQueue<T> {
  private head: QueueNode<T> | undefined = undefined
  private tail: QueueNode<T> | undefined = undefined
  size = 0

  push(value: T): QueueNode<T> {
    const node: QueueNode<T> = { value, prev: this.tail, next: undefined, linked: true }
    if (this.tail === undefined) this.head = node
    else this.tail.next = node
    this.tail = node
    this.size++
    return node
  }

  peek(): T | undefined {
    return this.head?.value
  }

  shift(): T | undefined {
    const node = this.head
    if (node === undefined) return undefined
    this.unlink(node)
    return node.value
  }

  /** Returns whether the node was still queued. */
  remove(node: QueueNode<T>): boolean {
    if (!node.linked) return false
    this.unlink(node)
    return true
  }

  /** Empties the queue and returns what it held, oldest first. */
  drain(): T[] {
    const values: T[] = []
    for (let node = this.head; node !== undefined; node = node.next) {
      node.linked = false
      values.push(node.value)
    }
    this.head = undefined
    this.tail = undefined
    this.size = 0
    return values
  }

  private unlink(node: QueueNode<T>): void {
    if (node.prev === undefined) this.head = node.next
    else node.prev.next = node.next
    if (node.next === undefined) this.tail = node.prev
    else node.next.prev = node.prev
    node.prev = undefined
    node.next = undefined
    node.linked = false
    this.size--
  }
}
