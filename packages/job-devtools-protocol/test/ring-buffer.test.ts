import { describe, expect, it } from 'vitest'
import { RingBuffer } from '../src/internal/ring-buffer.js'

/** A ring with the caller-side table it indexes, as the bridge uses it. */
function ringOf(capacity: number) {
  const ring = new RingBuffer(capacity)
  const table: string[] = new Array<string>(capacity).fill('')
  return {
    ring,
    push(item: string) {
      table[ring.push()] = item
      return ring.lastSeq
    },
    drain() {
      return ring.drain((slot, seq) => ({ item: table[slot], seq }))
    },
  }
}

describe('RingBuffer', () => {
  it('numbers pushes from 1 and drains them in FIFO order', () => {
    const { ring, push, drain } = ringOf(3)
    expect(ring.lastSeq).toBe(0)
    expect(push('a')).toBe(1)
    expect(push('b')).toBe(2)
    expect(ring.size).toBe(2)
    expect(drain()).toEqual({
      lost: undefined,
      items: [
        { item: 'a', seq: 1 },
        { item: 'b', seq: 2 },
      ],
    })
    expect(ring.size).toBe(0)
    expect(drain()).toEqual({ lost: undefined, items: [] })
    expect(push('c')).toBe(3)
  })

  it('drops the oldest on overflow and reports one contiguous lost range', () => {
    const { ring, push, drain } = ringOf(3)
    for (let seq = 1; seq <= 8; seq += 1) push(`#${seq}`)
    expect(ring.size).toBe(3)
    expect(drain()).toEqual({
      lost: { fromSeq: 1, toSeq: 5, reason: 'overflow' },
      items: [
        { item: '#6', seq: 6 },
        { item: '#7', seq: 7 },
        { item: '#8', seq: 8 },
      ],
    })
    push('#9')
    expect(drain().lost).toBeUndefined()
  })

  it('hands out slots below its capacity only', () => {
    const ring = new RingBuffer(4)
    const slots: number[] = []
    for (let index = 0; index < 11; index += 1) slots.push(ring.push())
    expect(slots).toEqual([0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2])
  })

  it('covers every seq exactly once, as items or lost ranges, across overflows and drains', () => {
    const { push, drain } = ringOf(4)
    const covered: number[] = []
    let seq = 0
    for (const burst of [3, 9, 1, 4, 5, 0, 13, 2]) {
      for (let index = 0; index < burst; index += 1) {
        seq += 1
        expect(push(String(seq))).toBe(seq)
      }
      const { lost, items } = drain()
      if (lost !== undefined) {
        for (let gone = lost.fromSeq; gone <= lost.toSeq; gone += 1) covered.push(gone)
      }
      for (const { item, seq: itemSeq } of items) {
        expect(item).toBe(String(itemSeq))
        covered.push(itemSeq)
      }
    }
    expect(covered).toEqual(Array.from({ length: seq }, (_, index) => index + 1))
  })

  it('merges a lost range reported from outside with pending drops', () => {
    const { ring, push, drain } = ringOf(1)
    push('#1')
    drain() // sent, but the send failed:
    ring.markLost(1, 1, 'transport-error')
    push('#2')
    push('#3')
    expect(drain()).toEqual({
      lost: { fromSeq: 1, toSeq: 2, reason: 'transport-error' },
      items: [{ item: '#3', seq: 3 }],
    })
  })

  it('widens a pending lost range to the left: drops during a send that then fails', () => {
    const { ring, push, drain } = ringOf(2)
    push('#1')
    push('#2')
    drain() // being sent; meanwhile a burst overflows:
    push('#3')
    push('#4')
    push('#5')
    ring.markLost(1, 2, 'transport-error') // and the send throws
    expect(drain()).toEqual({
      lost: { fromSeq: 1, toSeq: 3, reason: 'overflow' },
      items: [
        { item: '#4', seq: 4 },
        { item: '#5', seq: 5 },
      ],
    })
  })
})
