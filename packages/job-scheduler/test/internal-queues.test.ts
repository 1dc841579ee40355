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

  it('matches a plain list of (value, tag, time) under random pushes, shifts and skipped head reads', () => {
    // A seeded generator, so that a failure replays.
    let seed = 7
    const random = () => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) & 0x7fffffff
      return seed / 0x80000000
    }
    for (let trial = 0; trial < 20; trial++) {
      const queue = new ExchangeQueue<number, string>()
      const model: { value: number; tag: string; time: number }[] = []
      let next = 0
      let time = 0
      let tag = 'A'
      for (let step = 0; step < 3000; step++) {
        if (random() < 0.55) {
          // Tags and times change now and then, so runs have many lengths.
          if (random() < 0.2) tag = random() < 0.5 ? 'A' : random() < 0.5 ? 'B' : 'C'
          if (random() < 0.3)
            time += random() < 0.5 ? WAIT_RESOLUTION_MS / 4 : WAIT_RESOLUTION_MS * 3
          queue.push(next, tag, time)
          // Within the resolution, an admission keeps the time its run started with.
          const last = model[model.length - 1]
          const shared =
            last !== undefined && time - last.time >= 0 && time - last.time < WAIT_RESOLUTION_MS
          model.push({ value: next++, tag, time: shared ? last.time : time })
        } else if (model.length > 0) {
          const expected = model.shift()!
          // The head is not always read before a shift, as in a drop.
          if (random() < 0.7)
            expect([queue.headTag(), queue.headTime()]).toEqual([expected.tag, expected.time])
          expect(queue.shift()).toBe(expected.value)
        }
        expect(queue.size).toBe(model.length)
      }
    }
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
