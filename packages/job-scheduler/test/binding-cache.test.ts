import { createRuntime, readTaskTag, run, shutdown, tagTaskFn } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import {
  type AggregateBinding,
  aggregateTag,
  createAggregateScheduling,
  toGroupKey,
  withAggregate,
} from '../src/index.js'
import { InternedBinding, internedBindings } from '../src/internal/binding-cache.js'
import { flushTimes, gate } from './helpers.js'

const bindingOf = (fn: Parameters<typeof readTaskTag>[0]) => readTaskTag(fn, aggregateTag)

describe('withAggregate bindings (shared per aggregate id)', () => {
  it('calls for one aggregate id share one frozen { aggregate, id }, whichever form named the aggregate', () => {
    const a = bindingOf(withAggregate(async () => 1, { aggregate: 'sales.Order', id: 'shared-1' }))
    const b = bindingOf(
      withAggregate(async () => 2, {
        aggregate: { contextName: 'sales', aggregateName: 'Order' },
        id: 'shared-1',
      }),
    )
    expect(b).toBe(a)
    expect(a).toEqual({
      aggregate: { contextName: 'sales', aggregateName: 'Order' },
      id: 'shared-1',
    })
    expect(Object.keys(a!)).toEqual(['aggregate', 'id'])
    expect(Object.isFrozen(a)).toBe(true)
    expect(Object.isFrozen(a!.aggregate)).toBe(true)
  })

  it('tags with sharedBindings, so calls for one id share core’s record of the binding too', () => {
    expect(aggregateTag.sharedBindings).toBe(true)
  })

  it('keeps aggregates apart: the same id under another aggregate gets its own binding', () => {
    const order = bindingOf(withAggregate(async () => 1, { aggregate: 'sales.Order', id: 'x-1' }))
    const invoice = bindingOf(
      withAggregate(async () => 1, { aggregate: 'sales.Invoice', id: 'x-1' }),
    )
    const orderAgain = bindingOf(
      withAggregate(async () => 1, { aggregate: 'sales.Order', id: 'x-1' }),
    )
    expect(invoice).not.toBe(order)
    expect(invoice?.aggregate).toEqual({ contextName: 'sales', aggregateName: 'Invoice' })
    expect(orderAgain?.aggregate).toEqual({ contextName: 'sales', aggregateName: 'Order' })
    expect(orderAgain?.id).toBe('x-1')
  })

  it('keeps at most 16 384 bindings, however many ids pass', () => {
    for (let i = 0; i < 20_000; i++) {
      withAggregate(async () => i, { aggregate: 'sales.Order', id: `many-${i}` })
    }
    expect(internedBindings()).toBeGreaterThan(0)
    expect(internedBindings()).toBeLessThanOrEqual(16_384)
  })

  it('finds the group of its own bindings and of hand-made ones alike; rejects a non-string id', () => {
    const own = bindingOf(
      withAggregate(async () => 1, { aggregate: 'sales.Order', id: 'order-7' }),
    )!
    const aggregate = own.aggregate
    // Bindings made by hand, as a plugin using the public tag would.
    const handMade: AggregateBinding = { aggregate, id: 'order-7' }
    const numericId = { aggregate, id: 7 as unknown }
    for (const parallelism of [1, 7, 16, 128]) {
      expect(InternedBinding.groupOf(own, parallelism)).toBe(toGroupKey('order-7', parallelism))
      expect(InternedBinding.groupOf(handMade, parallelism)).toBe(
        toGroupKey('order-7', parallelism),
      )
    }
    expect(() => InternedBinding.groupOf(numericId, 16)).toThrow(TypeError)
    // At release: the same groups, and none for an id admission refused.
    for (const parallelism of [1, 7, 16, 128]) {
      expect(InternedBinding.admittedGroupOf(own, parallelism)).toBe(
        toGroupKey('order-7', parallelism),
      )
      expect(InternedBinding.admittedGroupOf(handMade, parallelism)).toBe(
        toGroupKey('order-7', parallelism),
      )
    }
    expect(InternedBinding.admittedGroupOf(numericId, 16)).toBeUndefined()
  })

  it('a task bound by hand with the public tag joins the same group, in run() order', async () => {
    const runtime = createRuntime({ plugins: [createAggregateScheduling({ parallelism: 16 })] })
    const log: string[] = []
    const first = gate()
    const bound = run(
      runtime,
      withAggregate(
        async () => {
          log.push('start bound')
          await first.promise
          log.push('end bound')
        },
        { aggregate: 'sales.Order', id: 'order-9' },
      ),
    )
    const byHand = run(
      runtime,
      tagTaskFn(
        async () => {
          log.push('start by hand')
        },
        aggregateTag,
        { aggregate: { contextName: 'sales', aggregateName: 'Order' }, id: 'order-9' },
      ),
    )
    await flushTimes(2)
    expect(log).toEqual(['start bound'])
    expect(byHand.state).toBe('queued')
    first.open()
    await Promise.all([bound, byHand])
    expect(log).toEqual(['start bound', 'end bound', 'start by hand'])
    await shutdown(runtime)
  })
})
