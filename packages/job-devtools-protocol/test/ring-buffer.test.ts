import { describe, expect, it } from 'vitest'
import { RingBuffer } from '../src/internal/ring-buffer.js'

const item = (seq: number) => ({ seq })

describe('RingBuffer', () => {
  it('drains in FIFO order and empties', () => {
    const ring = new RingBuffer<{ seq: number }>(3)
    ring.push(item(1))
    ring.push(item(2))
    expect(ring.drain()).toEqual({ lost: undefined, items: [item(1), item(2)] })
    expect(ring.size).toBe(0)
    expect(ring.drain()).toEqual({ lost: undefined, items: [] })
  })

  it('drops the oldest on overflow and reports one contiguous lost range', () => {
    const ring = new RingBuffer<{ seq: number }>(3)
    for (let seq = 1; seq <= 8; seq += 1) ring.push(item(seq))
    expect(ring.size).toBe(3)
    expect(ring.drain()).toEqual({
      lost: { fromSeq: 1, toSeq: 5, reason: 'overflow' },
      items: [item(6), item(7), item(8)],
    })
    ring.push(item(9))
    expect(ring.drain().lost).toBeUndefined()
  })

  it('merges a lost range reported from outside with pending drops', () => {
    const ring = new RingBuffer<{ seq: number }>(1)
    ring.markLost(1, 3, 'transport-error')
    ring.push(item(4))
    ring.push(item(5))
    expect(ring.drain()).toEqual({
      lost: { fromSeq: 1, toSeq: 4, reason: 'transport-error' },
      items: [item(5)],
    })
  })
})
