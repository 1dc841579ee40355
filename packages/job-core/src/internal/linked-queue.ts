/** A node of {@link LinkedQueue}; the handle `remove` takes. */
export interface QueueNode<T> {
  value: T
  prev: QueueNode<T> | undefined
  next: QueueNode<T> | undefined
  linked: boolean
}

/**
 * A FIFO with O(1) push, pop and removal of any node. An array with `shift`
 * is O(n) per pop and keeps removed entries alive until they reach the head.
 */
export class LinkedQueue<T> {
  private head: QueueNode<T> | undefined
  private tail: QueueNode<T> | undefined
  size = 0

  push(value: T): QueueNode<T> {
    const node: QueueNode<T> = { value, prev: this.tail, next: undefined, linked: true }
    if (this.tail) this.tail.next = node
    else this.head = node
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
    this.remove(node)
    return node.value
  }

  remove(node: QueueNode<T>): void {
    if (!node.linked) return
    node.linked = false
    if (node.prev) node.prev.next = node.next
    else this.head = node.next
    if (node.next) node.next.prev = node.prev
    else this.tail = node.prev
    node.prev = undefined
    node.next = undefined
    this.size--
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let node = this.head; node; node = node.next) yield node.value
  }
}
