import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { AggregateDispatcher, DefaultAggregateSchedulerSupplier, toGroupKey } from '../src/index.js'
import { exchange, type TestExchange } from './helpers.js'

interface Step {
  readonly id: number
  readonly hops: number
  readonly fails: boolean
}

describe('AggregateDispatcher model', () => {
  it('keeps every invariant for random traffic: order per id, one per group, bounded groups, nothing left', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ id: fc.nat(40), hops: fc.nat(3), fails: fc.boolean() }), {
          minLength: 1,
          maxLength: 120,
        }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 4 }),
        async (steps: Step[], parallelism, lanes) => {
          const seen = new Map<string, number[]>()
          const busyGroups = new Set<number>()
          let overlaps = 0
          /** After each dispatch: [groups the dispatcher reports, distinct groups dispatched so far]. */
          const groupCounts: [number, number][] = []
          const dispatchedGroups = new Set<number>()
          let inFlight = 0
          let maxInFlight = 0
          const d = new AggregateDispatcher<TestExchange>({
            name: 'model',
            parallelism,
            onError: () => {},
            schedulerSupplier: new DefaultAggregateSchedulerSupplier('model', lanes),
            handle: async (e) => {
              const group = toGroupKey(e.aggregateId.id, parallelism)
              // Counted, not asserted here: a throw inside the handler would be taken for a planned failure.
              if (busyGroups.has(group)) overlaps++
              busyGroups.add(group)
              inFlight++
              maxInFlight = Math.max(maxInFlight, inFlight)
              seen.set(e.aggregateId.id, [...(seen.get(e.aggregateId.id) ?? []), e.seq])
              for (let i = 0; i < steps[e.seq]!.hops; i++) await Promise.resolve()
              busyGroups.delete(group)
              inFlight--
              if (steps[e.seq]!.fails) throw new Error('planned failure')
            },
          })
          d.prepare()
          d.start()
          // Dispatched synchronously: no handler can finish (and free its group)
          // before the loop ends, so each group dispatched so far must be alive.
          steps.forEach((step, seq) => {
            d.dispatch(exchange(`id-${step.id}`, seq))
            dispatchedGroups.add(toGroupKey(`id-${step.id}`, parallelism))
            groupCounts.push([d.activeGroups, dispatchedGroups.size])
          })
          await d.stopGracefully()
          expect(overlaps).toBe(0)
          expect(groupCounts.filter(([reported, expected]) => reported !== expected)).toEqual([])
          expect(maxInFlight).toBeLessThanOrEqual(lanes)
          expect(d.activeGroups).toBe(0)
          for (const sequences of seen.values()) {
            expect(sequences).toEqual([...sequences].sort((a, b) => a - b))
          }
          expect([...seen.values()].flat()).toHaveLength(steps.length)
          const [stats] = d.stats().aggregates
          expect(stats).toMatchObject({
            dispatched: steps.length,
            completed: steps.filter((s) => !s.fails).length,
            failed: steps.filter((s) => s.fails).length,
            queued: 0,
            inFlight: 0,
          })
        },
      ),
      { numRuns: 150 },
    )
  })
})
