import { describe, expect, it } from 'vitest'
import { ExchangeQueue, WAIT_RESOLUTION_MS } from '../src/internal/exchange-queue.js'
import { RingQueue } from '../src/internal/ring-queue.js'

describe('ExchangeQueue (a dispatcher group FIFO)', () => {
  it('keeps each value with its tag and time, in order, across growth and wrap-around', () => {
    const queue = new ExchangeQueue<number, string>()
    const seen: [number, string, number][] = []
    let next = 0
    // Interleaved pushes and shifts wrap the ring before it grows; tags change
    // every few values, in runs of different lengths.
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 3 + (round % 5); i++, next++) {
        queue.push(next, `tag-${Math.floor(next / (1 + (round % 3)))}`, next)
      }
      for (let i = 0; i < 2 && queue.size > 0; i++) {
        seen.push([queue.headTime(), queue.headTag(), queue.shift() as number])
      }
    }
    while (queue.size > 0) seen.push([queue.headTime(), queue.headTag(), queue.shift() as number])
    expect(seen.map(([, , value]) => value)).toEqual(Array.from({ length: next }, (_, i) => i))
    for (const [time, , value] of seen) expect(time).toBe(value)
    const expectedTags: string[] = []
    let value = 0
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 3 + (round % 5); i++, value++) {
        expectedTags.push(`tag-${Math.floor(value / (1 + (round % 3)))}`)
      }
    }
    expect(seen.map(([, tag]) => tag)).toEqual(expectedTags)
    expect(queue.shift()).toBeUndefined()
  })

  it('grows while wrapped (head past the start) and keeps values with their times', () => {
    for (const shifted of [0, 1, 3]) {
      const queue = new ExchangeQueue<number, string>()
      let next = 0
      let expected = 0
      for (let i = 0; i < 4; i++, next++) queue.push(next, 'A', next * 10)
      for (let i = 0; i < shifted; i++, expected++) expect(queue.shift()).toBe(expected)
      // Refill past capacity twice: the first growth happens with the ring wrapped.
      for (let i = 0; i < 20; i++, next++) queue.push(next, 'A', next * 10)
      while (queue.size > 0) {
        expect(queue.headTime()).toBe(expected * 10)
        expect(queue.shift()).toBe(expected++)
      }
      expect(expected).toBe(next)
    }
  })

  it('starts a new run when a tag comes back after its run emptied', () => {
    const queue = new ExchangeQueue<string, string>()
    queue.push('a1', 'A', 0)
    expect(queue.shift()).toBe('a1')
    queue.push('a2', 'A', 1)
    queue.push('b1', 'B', 2)
    queue.push('a3', 'A', 3)
    expect([queue.headTag(), queue.shift()]).toEqual(['A', 'a2'])
    expect([queue.headTag(), queue.shift()]).toEqual(['B', 'b1'])
    expect([queue.headTag(), queue.headTime(), queue.shift()]).toEqual(['A', 3, 'a3'])
  })

  it('a queue that never empties cuts its consumed front away: it stays within twice its size, in order', () => {
    const queue = new ExchangeQueue<number, string>()
    let next = 0
    let expected = 0
    let most = 0
    for (let i = 0; i < 100; i++, next++) queue.push(next, 'A', next)
    // Two in, two out, for far longer than the cut threshold: the queue holds ~100 throughout.
    for (let round = 0; round < 20_000; round++) {
      for (let i = 0; i < 2; i++, next++) queue.push(next, next % 7 === 0 ? 'B' : 'A', next)
      for (let i = 0; i < 2; i++, expected++) {
        expect(queue.headTime()).toBe(expected)
        expect(queue.headTag()).toBe(expected % 7 === 0 && expected >= 100 ? 'B' : 'A')
        expect(queue.shift()).toBe(expected)
      }
      most = Math.max(most, queue.slots)
    }
    expect(queue.size).toBe(100)
    expect(most).toBeLessThanOrEqual(2 * 4096 + 2)
    while (queue.size > 0) expect(queue.shift()).toBe(expected++)
    expect(queue.slots).toBe(0)
  })

  it(`admissions less than ${WAIT_RESOLUTION_MS} ms apart share the first one's time; later ones keep their own`, () => {
    const queue = new ExchangeQueue<number, string>()
    const times = [0, 0.03, 0.06, 0.1, 0.5, 0.52, 3, 2.99, 7]
    times.forEach((time, i) => {
      queue.push(i, 'A', time)
    })
    const seen: number[] = []
    while (queue.size > 0) {
      seen.push(queue.headTime())
      queue.shift()
    }
    // 0.1 is not < 0.1 after 0: its own; a clock that goes back starts its own too.
    expect(seen).toEqual([0, 0, 0, 0.1, 0.5, 0.5, 3, 2.99, 7])
  })

  it('drain visits every tag oldest first and leaves the queue empty', () => {
    const queue = new ExchangeQueue<number, string>()
    for (let i = 0; i < 20; i++) queue.push(i, i < 5 ? 'A' : i < 15 ? 'B' : 'A', i)
    const tags: string[] = []
    queue.drain((tag) => tags.push(tag))
    expect(tags).toEqual([...'AAAAA', ...'BBBBBBBBBB', ...'AAAAA'])
    expect(queue.size).toBe(0)
    queue.push(99, 'C', 0)
    expect([queue.headTag(), queue.shift()]).toEqual(['C', 99])
  })
})

describe('RingQueue (scheduler lanes)', () => {
  it('is a FIFO across growth and wrap-around; drain empties it oldest first', () => {
    const queue = new RingQueue<number>()
    const out: number[] = []
    let next = 0
    for (let round = 0; round < 30; round++) {
      for (let i = 0; i < 4; i++) queue.push(next++)
      out.push(queue.shift() as number, queue.shift() as number)
      expect(queue.peek()).toBe(out[out.length - 1]! + 1)
    }
    out.push(...queue.drain())
    expect(out).toEqual(Array.from({ length: next }, (_, i) => i))
    expect(queue.size).toBe(0)
    expect(queue.shift()).toBeUndefined()
    expect(queue.peek()).toBeUndefined()
  })
})
