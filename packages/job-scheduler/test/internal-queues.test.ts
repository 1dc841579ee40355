import { describe, expect, it } from 'vitest'
import { Fifo } from '../src/internal/fifo.js'
import { GroupQueue, WAIT_RESOLUTION_MS } from '../src/internal/group-queue.js'

// A seeded generator, so that a failure replays.
function seeded(seed: number): () => number {
  let state = seed
  return () => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) & 0x7fffffff
    return state / 0x80000000
  }
}

describe('Fifo (lanes, forwarding order, group items)', () => {
  it('is a FIFO under interleaved pushes and shifts; peek and peekLast leave values in place', () => {
    const queue = new Fifo<number>()
    const out: number[] = []
    let next = 0
    for (let round = 0; round < 30; round++) {
      for (let i = 0; i < 4; i++) queue.push(next++)
      expect(queue.peekLast()).toBe(next - 1)
      out.push(queue.shift() as number, queue.shift() as number)
      expect(queue.peek()).toBe(out[out.length - 1]! + 1)
      expect(queue.size).toBe(next - out.length)
    }
    out.push(...queue.drain())
    expect(out).toEqual(Array.from({ length: next }, (_, i) => i))
    expect(queue.size).toBe(0)
    expect(queue.shift()).toBeUndefined()
    expect(queue.peek()).toBeUndefined()
    expect(queue.peekLast()).toBeUndefined()
  })

  it('starts over when it empties: no slot is kept', () => {
    const queue = new Fifo<object>()
    for (let i = 0; i < 10; i++) queue.push({ i })
    for (let i = 0; i < 9; i++) queue.shift()
    expect(queue.slots).toBe(10)
    queue.shift()
    expect(queue.slots).toBe(0)
    queue.push({ i: 10 })
    expect([queue.size, queue.slots]).toEqual([1, 1])
    expect(queue.drain()).toEqual([{ i: 10 }])
    expect(queue.slots).toBe(0)
  })

  it('a queue that never empties cuts its consumed front away: it stays within about twice its size, in order', () => {
    const queue = new Fifo<number>()
    let next = 0
    let expected = 0
    let most = 0
    for (let i = 0; i < 100; i++) queue.push(next++)
    // Two in, two out, for far longer than the cut threshold: the queue holds ~100 throughout.
    for (let round = 0; round < 20_000; round++) {
      for (let i = 0; i < 2; i++) queue.push(next++)
      for (let i = 0; i < 2; i++) expect(queue.shift()).toBe(expected++)
      most = Math.max(most, queue.slots)
    }
    expect(queue.size).toBe(100)
    expect(most).toBeLessThanOrEqual(2 * 4096 + 2)
    while (queue.size > 0) expect(queue.shift()).toBe(expected++)
    expect(queue.slots).toBe(0)
  })

  it('matches a plain array under random pushes and shifts', () => {
    const random = seeded(11)
    for (let trial = 0; trial < 20; trial++) {
      const queue = new Fifo<number>()
      const model: number[] = []
      let next = 0
      for (let step = 0; step < 3000; step++) {
        if (random() < 0.55) {
          queue.push(next)
          model.push(next++)
        } else {
          expect(queue.peek()).toBe(model[0])
          expect(queue.shift()).toBe(model.shift())
        }
        expect(queue.size).toBe(model.length)
        expect(queue.peekLast()).toBe(model[model.length - 1])
      }
    }
  })
})

describe('GroupQueue (a group’s waiting items, with counters and enqueue times)', () => {
  it('keeps each item with its counters and time, in order, through many runs', () => {
    const queue = new GroupQueue<number, string>()
    const seen: [number, string, number][] = []
    let next = 0
    // Interleaved pushes and shifts; counters change every few items, in
    // runs of different lengths; every time is its own (1 ms apart).
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 3 + (round % 5); i++, next++) {
        queue.push(next, `tag-${Math.floor(next / (1 + (round % 3)))}`, next)
      }
      for (let i = 0; i < 2 && queue.size > 0; i++) {
        seen.push([queue.headEnqueuedAt(), queue.headCounters(), queue.shift() as number])
      }
    }
    while (queue.size > 0) {
      seen.push([queue.headEnqueuedAt(), queue.headCounters(), queue.shift() as number])
    }
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

  it('starts a new run when counters come back after their run emptied', () => {
    const queue = new GroupQueue<string, string>()
    queue.push('a1', 'A', 0)
    expect(queue.shift()).toBe('a1')
    queue.push('a2', 'A', 0)
    queue.push('b1', 'B', 0)
    queue.push('a3', 'A', 0)
    expect([queue.headCounters(), queue.shift()]).toEqual(['A', 'a2'])
    expect([queue.headCounters(), queue.shift()]).toEqual(['B', 'b1'])
    expect([queue.headCounters(), queue.headEnqueuedAt(), queue.shift()]).toEqual(['A', 0, 'a3'])
  })

  it(`admissions less than ${WAIT_RESOLUTION_MS} ms apart with the same counters share the first one's time; others keep their own`, () => {
    const queue = new GroupQueue<number, string>()
    const admissions: [string, number][] = [
      ['A', 0],
      ['A', 0.03],
      ['A', 0.06],
      ['A', 0.1],
      ['A', 0.5],
      ['A', 0.52],
      ['B', 0.53],
      ['A', 3],
      ['A', 2.99],
      ['A', 7],
    ]
    admissions.forEach(([counters, time], i) => {
      queue.push(i, counters, time)
    })
    const seen: number[] = []
    while (queue.size > 0) {
      seen.push(queue.headEnqueuedAt())
      queue.shift()
    }
    // 0.1 is not < 0.1 after 0: its own; other counters start a run of their
    // own; a clock that goes back starts its own too.
    expect(seen).toEqual([0, 0, 0, 0.1, 0.5, 0.5, 0.53, 3, 2.99, 7])
  })

  it('matches a plain list of (item, counters, time) under random pushes, shifts and skipped head reads', () => {
    const random = seeded(7)
    for (let trial = 0; trial < 20; trial++) {
      const queue = new GroupQueue<number, string>()
      const model: { item: number; counters: string; time: number }[] = []
      let next = 0
      let time = 0
      let counters = 'A'
      for (let step = 0; step < 3000; step++) {
        if (random() < 0.55) {
          // Counters and times change now and then, so runs have many lengths.
          if (random() < 0.2) counters = random() < 0.5 ? 'A' : random() < 0.5 ? 'B' : 'C'
          if (random() < 0.3)
            time += random() < 0.5 ? WAIT_RESOLUTION_MS / 4 : WAIT_RESOLUTION_MS * 3
          queue.push(next, counters, time)
          // Within the resolution, an admission right behind one of the same
          // counters keeps the time that one was given.
          const last = model[model.length - 1]
          const shared =
            last !== undefined &&
            last.counters === counters &&
            time - last.time >= 0 &&
            time - last.time < WAIT_RESOLUTION_MS
          model.push({ item: next++, counters, time: shared ? last.time : time })
        } else if (model.length > 0) {
          const expected = model.shift()!
          // The head is not always read before a shift, as in a drop.
          if (random() < 0.7) {
            expect([queue.headCounters(), queue.headEnqueuedAt()]).toEqual([
              expected.counters,
              expected.time,
            ])
          }
          expect(queue.shift()).toBe(expected.item)
        }
        expect(queue.size).toBe(model.length)
      }
    }
  })

  it('drain visits every item with its counters oldest first and leaves the queue empty', () => {
    const queue = new GroupQueue<number, string>()
    for (let i = 0; i < 20; i++) queue.push(i, i < 5 ? 'A' : i < 15 ? 'B' : 'A', i)
    const visited: string[] = []
    queue.drain((counters, item) => visited.push(`${counters}${item}`))
    expect(visited).toEqual(
      Array.from({ length: 20 }, (_, i) => `${i < 5 || i >= 15 ? 'A' : 'B'}${i}`),
    )
    expect([queue.size, queue.slots]).toEqual([0, 0])
    queue.push(99, 'C', 0)
    expect([queue.headCounters(), queue.shift()]).toEqual(['C', 99])
  })
})
