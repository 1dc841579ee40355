import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PriorityOrder } from '../src/internal/priority-order.js'
import { queueOrder } from '../src/internal/queue-order.js'
import { SortedRun } from '../src/internal/sorted-run.js'

// ---------------------------------------------------------------- reference

interface Entry {
  readonly id: number
  readonly priority: number
  readonly seq: number
}

/** Higher priority first, then earlier arrival; total over ±Infinity and -0 (no subtraction). */
function before(a: Entry, b: Entry): boolean {
  return a.priority > b.priority || (a.priority === b.priority && a.seq < b.seq)
}

function referenceOrder(entries: readonly Entry[]): number[] {
  return [...entries]
    .sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0))
    .map((entry) => entry.id)
}

/** The index of the entry a correct queue takes next, by linear scan. */
function bestIndex(entries: readonly Entry[]): number {
  let best = 0
  for (let i = 1; i < entries.length; i++) {
    if (before(entries[i] as Entry, entries[best] as Entry)) best = i
  }
  return best
}

/** The entry a correct queue hands out last: the lowest priority, and within it the earliest arrival. */
function referenceLast(entries: readonly Entry[]): number | undefined {
  let found: Entry | undefined
  for (const entry of entries) {
    if (
      found === undefined ||
      entry.priority < found.priority ||
      (entry.priority === found.priority && entry.seq < found.seq)
    ) {
      found = entry
    }
  }
  return found?.id
}

// Priorities as users pass them: one for all, a few levels, deadlines or
// timestamps, and any double the backend must order (±Infinity, -0, tiny and huge).
const onePriority = fc.constant(0)
const fewPriorities = fc.integer({ min: -2, max: 2 })
const timestamps = fc.integer({ min: 1_700_000_000_000, max: 1_800_000_000_000 })
const edgePriorities = fc.constantFrom(
  0,
  -0,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Number.MIN_VALUE,
  -Number.MIN_VALUE,
  1,
  -1,
)
const anyPriority = fc.double({ noNaN: true })
const priorities = fc.oneof(onePriority, fewPriorities, timestamps, edgePriorities, anyPriority)

// ---------------------------------------------------------------- queueOrder

describe('queueOrder', () => {
  it('orders by priority, highest first, ties in arrival (index) order, for any numbers', () => {
    fc.assert(
      fc.property(fc.array(priorities, { maxLength: 700 }), (spec) => {
        const entries = spec.map((priority, id) => ({ id, priority, seq: id }))
        expect([...queueOrder(spec)]).toEqual(referenceOrder(entries))
      }),
      { numRuns: 300 },
    )
  })

  it('keeps -0 and 0 together in arrival order, and puts ±Infinity at the ends', () => {
    const spec = [0, Number.NEGATIVE_INFINITY, -0, 5, Number.POSITIVE_INFINITY, 0, -0, -5]
    expect([...queueOrder(spec)]).toEqual([4, 3, 0, 2, 5, 6, 7, 1])
  })

  it('handles the empty batch, one entry, and 100k distinct timestamps', () => {
    expect([...queueOrder([])]).toEqual([])
    expect([...queueOrder([7])]).toEqual([0])
    const base = 1_764_547_200_000
    const spec = Array.from({ length: 100_000 }, (_, i) => base + ((i * 48_271) % 100_003))
    const entries = spec.map((priority, id) => ({ id, priority, seq: id }))
    expect([...queueOrder(spec)]).toEqual(referenceOrder(entries))
  })
})

// ---------------------------------------------------------------- SortedRun

describe('SortedRun', () => {
  it('takes what fits at its back, merges a batch, and hands out everything in queue order', () => {
    fc.assert(
      fc.property(
        fc.array(priorities, { maxLength: 300 }),
        fc.nat(300),
        fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 300 }),
        (spec, taken, keepMod) => {
          const run = new SortedRun<number>()
          const inRun: Entry[] = []
          const batch: Entry[] = []
          for (const [id, priority] of spec.entries()) {
            const entry = { id, priority, seq: id }
            if (run.fits(priority)) {
              run.push(id, priority, id)
              inRun.push(entry)
            } else batch.push(entry)
          }
          // What fits is already in order.
          expect(inRun.map((e) => e.id)).toEqual(referenceOrder(inRun))
          const took: number[] = []
          for (let k = 0; k < Math.min(taken, inRun.length); k++) took.push(run.shift() as number)
          expect(took).toEqual(inRun.slice(0, took.length).map((e) => e.id))
          const order = queueOrder(batch.map((e) => e.priority))
          run.merge(
            batch.map((e) => e.id),
            batch.map((e) => e.priority),
            batch.map((e) => e.seq),
            order,
          )
          let rest = [...inRun.slice(took.length), ...batch]
          expect(run.length).toBe(rest.length)
          // Keep a pseudo-random subset: order and `lowest` must follow.
          const keep = (id: number) => (keepMod[id % Math.max(1, keepMod.length)] ?? 1) !== 0
          run.retain(keep)
          rest = rest.filter((e) => keep(e.id))
          const at = run.lowest(() => true)
          expect(at === -1 ? undefined : run.itemAt(at)).toBe(referenceLast(rest))
          const out: number[] = []
          for (let id = run.shift(); id !== undefined; id = run.shift()) out.push(id)
          expect(out).toEqual(referenceOrder(rest))
          expect(run.length).toBe(0)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('stays in order across the reclaiming of a long taken prefix', () => {
    const run = new SortedRun<number>()
    for (let i = 0; i < 5_000; i++) run.push(i, -i, i)
    const out: number[] = []
    for (let k = 0; k < 3_000; k++) out.push(run.shift() as number)
    run.merge([5_000, 5_001], [-3_500.5, 10], [5_000, 5_001], queueOrder([-3_500.5, 10]))
    for (let id = run.shift(); id !== undefined; id = run.shift()) out.push(id)
    const expected = [
      ...Array.from({ length: 3_000 }, (_, i) => i),
      5_001,
      ...Array.from({ length: 501 }, (_, i) => 3_000 + i),
      5_000,
      ...Array.from({ length: 1_499 }, (_, i) => 3_501 + i),
    ]
    expect(out).toEqual(expected)
  })

  it('lowest skips entries that are not live and takes the earliest of the lowest priority', () => {
    const run = new SortedRun<string>()
    run.push('a', 3, 0)
    run.push('b', 1, 1)
    run.push('c', 1, 2)
    run.push('d', 1, 3)
    expect(run.itemAt(run.lowest(() => true))).toBe('b')
    expect(run.itemAt(run.lowest((id) => id !== 'b'))).toBe('c')
    expect(run.itemAt(run.lowest((id) => id === 'a'))).toBe('a')
    expect(run.lowest(() => false)).toBe(-1)
  })
})

// ---------------------------------------------------------------- PriorityOrder

describe('PriorityOrder', () => {
  it('matches a sorted reference under bursts, pops, retains and last, through the run, the batch and the heap', () => {
    // Bursts long enough to be sorted (over 128) and short ones sifted into
    // the heap; runs of one priority and descending ones that join the run.
    const shape = fc.constantFrom('any', 'same', 'descending', 'ascending')
    const op = fc.oneof(
      {
        arbitrary: fc.record({
          burst: fc.integer({ min: 1, max: 400 }),
          shape,
          seed: priorities,
        }),
        weight: 3,
      },
      { arbitrary: fc.record({ pop: fc.integer({ min: 1, max: 150 }) }), weight: 3 },
      { arbitrary: fc.record({ retain: fc.integer({ min: 2, max: 5 }) }), weight: 1 },
      { arbitrary: fc.constant({ last: true as const }), weight: 1 },
    )
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 40 }),
        fc.array(priorities, { minLength: 1 }),
        (ops, pool) => {
          const order = new PriorityOrder<number>()
          let model: Entry[] = []
          let seq = 0
          for (const step of ops) {
            if ('burst' in step) {
              for (let k = 0; k < step.burst; k++) {
                const priority =
                  step.shape === 'same'
                    ? step.seed
                    : step.shape === 'descending'
                      ? -k
                      : step.shape === 'ascending'
                        ? k
                        : (pool[(seq * 7 + k) % pool.length] as number)
                const id = seq++
                order.push(id, priority)
                model.push({ id, priority, seq: id })
              }
            } else if ('pop' in step) {
              for (let k = 0; k < step.pop; k++) {
                const expected =
                  model.length === 0 ? undefined : model.splice(bestIndex(model), 1)[0]
                expect(order.pop()).toBe(expected?.id)
              }
            } else if ('retain' in step) {
              const keep = (id: number) => id % step.retain !== 0
              order.retain(keep)
              model = model.filter((e) => keep(e.id))
            } else {
              expect(order.last((id) => id % 3 !== 0)).toBe(
                referenceLast(model.filter((e) => e.id % 3 !== 0)),
              )
              expect(order.last(() => true)).toBe(referenceLast(model))
            }
            expect(order.size).toBe(model.length)
          }
          const rest: number[] = []
          for (let id = order.pop(); id !== undefined; id = order.pop()) rest.push(id)
          expect(rest).toEqual(referenceOrder(model))
          expect(order.size).toBe(0)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('a burst drained then refilled keeps FIFO within a priority across the sort', () => {
    const order = new PriorityOrder<number>()
    // 300 entries of 3 priorities interleaved: -1s join the run, the rest are sorted in.
    for (let i = 0; i < 300; i++) order.push(i, (i % 3) - 1)
    const first = [order.pop(), order.pop()]
    for (let i = 300; i < 310; i++) order.push(i, 1)
    const rest: number[] = []
    for (let id = order.pop(); id !== undefined; id = order.pop()) rest.push(id)
    const of = (p: number, from: number, to: number) =>
      Array.from({ length: to - from }, (_, k) => from + k).filter((i) => (i % 3) - 1 === p)
    expect([...first, ...rest]).toEqual([
      ...of(1, 0, 300),
      ...Array.from({ length: 10 }, (_, k) => 300 + k),
      ...of(0, 0, 300),
      ...of(-1, 0, 300),
    ])
  })
})
