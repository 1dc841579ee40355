/** A node of {@link LinkedList}; `list` is cleared when it leaves, so stale handles are harmless. */
export interface ListNode<T> {
  readonly value: T
  prev: ListNode<T> | undefined
  next: ListNode<T> | undefined
  list: LinkedList<T> | undefined
}

/**
 * A FIFO with O(1) push, shift and removal of any node: a waiter cancelled
 * in the middle of a long queue leaves it without a scan, and the head never
 * moves an array (no `Array#shift` on the hot path).
 */
export class LinkedList<T> {
  private head: ListNode<T> | undefined
  private tail: ListNode<T> | undefined
  size = 0

  push(value: T): ListNode<T> {
    const node: ListNode<T> = { value, prev: undefined, next: undefined, list: undefined }
    this.link(node)
    return node
  }

  shift(): T | undefined {
    const node = this.head
    if (node === undefined) return undefined
    this.remove(node)
    return node.value
  }

  remove(node: ListNode<T>): boolean {
    if (node.list !== this) return false
    if (node.prev === undefined) this.head = node.next
    else node.prev.next = node.next
    if (node.next === undefined) this.tail = node.prev
    else node.next.prev = node.prev
    node.prev = undefined
    node.next = undefined
    node.list = undefined
    this.size--
    return true
  }

  /**
   * Moves every node, in order, to the end of `target`. The nodes stay the
   * same objects, so handles held on them (to remove one later) stay valid.
   */
  moveAllTo(target: LinkedList<T>): void {
    for (let node = this.head; node !== undefined; node = this.head) {
      this.remove(node)
      target.link(node)
    }
  }

  /** Empties the list and returns what it held, in order. */
  drain(): T[] {
    const values: T[] = []
    for (let node = this.head; node !== undefined; node = this.head) {
      this.remove(node)
      values.push(node.value)
    }
    return values
  }

  private link(node: ListNode<T>): void {
    node.prev = this.tail
    node.next = undefined
    node.list = this
    if (this.tail === undefined) this.head = node
    else this.tail.next = node
    this.tail = node
    this.size++
  }
}
