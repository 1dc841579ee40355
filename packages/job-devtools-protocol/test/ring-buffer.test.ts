import { describe, expect, it } from 'vitest'
import { RingBuffer } from '../src/internal/ring-buffer.js'

const asRecord = (item: string, seq: number, ts: number, tag: number) => ({ item, seq, ts, tag })

describe('RingBuffer', () => {
  it('numbers pushes from 1 and drains them in FIFO order with their stamp and tag', () => {
    const ring = new RingBuffer<string>(3)
    expect(ring.lastSeq).toBe(0)
    expect(ring.push('a', 10, 0)).toBe(1)
    expect(ring.push('b', 20, 1)).toBe(2)
    expect(ring.lastSeq).toBe(2)
    expect(ring.drain(asRecord)).toEqual({
      lost: undefined,
      items: [
        { item: 'a', seq: 1, ts: 10, tag: 0 },
        { item: 'b', seq: 2, ts: 20, tag: 1 },
      ],
    })
    expect(ring.size).toBe(0)
    expect(ring.drain(asRecord)).toEqual({ lost: undefined, items: [] })
    expect(ring.push('c', 30, 0)).toBe(3)
  })

  it('drops the oldest on overflow and reports one contiguous lost range', () => {
    const ring = new RingBuffer<string>(3)
    for (let seq = 1; seq <= 8; seq += 1) ring.push(`#${seq}`, seq * 10, seq % 2)
    expect(ring.size).toBe(3)
    expect(ring.drain(asRecord)).toEqual({
      lost: { fromSeq: 1, toSeq: 5, reason: 'overflow' },
      items: [
        { item: '#6', seq: 6, ts: 60, tag: 0 },
        { item: '#7', seq: 7, ts: 70, tag: 1 },
        { item: '#8', seq: 8, ts: 80, tag: 0 },
      ],
    })
    ring.push('#9', 90, 0)
    expect(ring.drain(asRecord).lost).toBeUndefined()
  })

  it('covers every seq exactly once, as items or lost ranges, across overflows and drains', () => {
    const ring = new RingBuffer<number>(4)
    const covered: number[] = []
    const take = () => {
      const { lost, items } = ring.drain((item, seq) => {
        expect(item).toBe(seq)
        return seq
      })
      if (lost !== undefined) {
        for (let seq = lost.fromSeq; seq <= lost.toSeq; seq += 1) covered.push(seq)
      }
      covered.push(...items)
    }
    let seq = 0
    for (const burst of [3, 9, 1, 4, 5, 0, 13, 2]) {
      for (let index = 0; index < burst; index += 1) {
        seq += 1
        expect(ring.push(seq, seq, 0)).toBe(seq)
      }
      take()
    }
    expect(covered).toEqual(Array.from({ length: seq }, (_, index) => index + 1))
  })

  it('merges a lost range reported from outside with pending drops', () => {
    const ring = new RingBuffer<string>(1)
    ring.push('#1', 1, 0)
    ring.drain(asRecord) // sent, but the send failed:
    ring.markLost(1, 1, 'transport-error')
    ring.push('#2', 2, 0)
    ring.push('#3', 3, 0)
    expect(ring.drain(asRecord)).toEqual({
      lost: { fromSeq: 1, toSeq: 2, reason: 'transport-error' },
      items: [{ item: '#3', seq: 3, ts: 3, tag: 0 }],
    })
  })

  it('widens a pending lost range to the left: drops during a send that then fails', () => {
    const ring = new RingBuffer<string>(2)
    ring.push('#1', 1, 0)
    ring.push('#2', 2, 0)
    ring.drain(asRecord) // being sent; meanwhile a burst overflows:
    ring.push('#3', 3, 0)
    ring.push('#4', 4, 0)
    ring.push('#5', 5, 0)
    ring.markLost(1, 2, 'transport-error') // and the send throws
    expect(ring.drain(asRecord)).toEqual({
      lost: { fromSeq: 1, toSeq: 3, reason: 'overflow' },
      items: [
        { item: '#4', seq: 4, ts: 4, tag: 0 },
        { item: '#5', seq: 5, ts: 5, tag: 0 },
      ],
    })
  })
})
