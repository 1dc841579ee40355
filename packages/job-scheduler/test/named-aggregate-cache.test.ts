import { readTaskTag } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import { aggregateTag, withAggregate } from '../src/index.js'
import { namedAggregateOf } from '../src/internal/named-aggregate-cache.js'

describe('namedAggregateOf (withAggregate, once per command)', () => {
  it('parses a "context.Aggregate" string once and shares the frozen result', () => {
    const first = namedAggregateOf('sales.Order')
    expect(first).toEqual({ contextName: 'sales', aggregateName: 'Order' })
    expect(Object.isFrozen(first)).toBe(true)
    expect(namedAggregateOf('sales.Order')).toBe(first)
    const a = readTaskTag(
      withAggregate(async () => 1, { aggregate: 'sales.Order', id: 'a' }),
      aggregateTag,
    )
    const b = readTaskTag(
      withAggregate(async () => 2, { aggregate: 'sales.Order', id: 'b' }),
      aggregateTag,
    )
    expect(a?.aggregate).toBe(first)
    expect(b?.aggregate).toBe(first)
    expect([a?.id, b?.id]).toEqual(['a', 'b'])
  })

  it('still rejects a malformed string every time, and copies objects', () => {
    for (let i = 0; i < 2; i++) {
      expect(() => namedAggregateOf('Order')).toThrow(TypeError)
      expect(() => namedAggregateOf('a.b.c')).toThrow(/"context.Aggregate"/)
    }
    const input = { contextName: 'sales', aggregateName: 'Invoice', extra: 1 }
    const named = namedAggregateOf(input)
    expect(named).toEqual({ contextName: 'sales', aggregateName: 'Invoice' })
    expect(named).not.toBe(input)
  })
})
