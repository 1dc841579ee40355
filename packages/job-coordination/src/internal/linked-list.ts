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
    const node: ListNode<T> = { value, prev: this.tail, next: undefined, list: this }
    if (this.tail === undefined) this.head = node
    else this.tail.next = node
    this.tail = node
    this.size++
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

  /** Empties the list and returns what it held, in order. */
  drain(): T[] {
    const values: T[] = []
    for (let value = this.shift(); value !== undefined; value = this.shift()) values.push(value)
    return values
  }
}
