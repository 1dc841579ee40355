import os from 'node:os'
import { IllegalStateError } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import {
  type AggregateSchedulerSupplier,
  BorrowedAggregateSchedulerSupplier,
  DefaultAggregateSchedulerSupplier,
  immediateScheduler,
  toNamedAggregate,
} from '../src/index.js'
import { flush, gate } from './helpers.js'

describe('toNamedAggregate', () => {
  it('parses "context.Aggregate" and ignores a default context when the string has one', () => {
    expect(toNamedAggregate('sales.Order')).toEqual({
      contextName: 'sales',
      aggregateName: 'Order',
    })
    expect(toNamedAggregate('sales.Order', 'ignored-context')).toEqual(
      toNamedAggregate('sales.Order'),
    )
    expect(toNamedAggregate('Order', 'sales')).toEqual({
      contextName: 'sales',
      aggregateName: 'Order',
    })
  })

  it('materializes objects: only contextName and aggregateName, frozen', () => {
    const named = toNamedAggregate({
      contextName: 'sales',
      aggregateName: 'Order',
      id: 'x',
    } as never)
    expect(named).toEqual({ contextName: 'sales', aggregateName: 'Order' })
    expect(Object.isFrozen(named)).toBe(true)
  })

  it('rejects malformed names with a TypeError saying what is expected', () => {
    for (const bad of ['Order', '.Order', 'sales.', 'a.b.c', '', 42, null]) {
      expect(() => toNamedAggregate(bad as string)).toThrow(TypeError)
    }
    expect(() => toNamedAggregate('Order')).toThrow(/"context\.Aggregate"/)
  })
})

describe('DefaultAggregateSchedulerSupplier', () => {
  it('exposes the configured name and parallelism', () => {
    const supplier = new DefaultAggregateSchedulerSupplier('worker', 2)
    expect(supplier.name).toBe('worker')
    expect(supplier.parallelism).toBe(2)
  })

  it('defaults parallelism to the number of CPUs', () => {
    expect(new DefaultAggregateSchedulerSupplier('worker').parallelism).toBe(
      os.availableParallelism(),
    )
  })

  it('rejects bad parallelism with a RangeError and a bad name with a TypeError', () => {
    expect(() => new DefaultAggregateSchedulerSupplier('worker', 0)).toThrow(RangeError)
    expect(() => new DefaultAggregateSchedulerSupplier('worker', 1.5)).toThrow(RangeError)
    expect(() => new DefaultAggregateSchedulerSupplier('', 1)).toThrow(TypeError)
  })

  it('caches by materialized named aggregate', async () => {
    const supplier = new DefaultAggregateSchedulerSupplier('worker', 1)
    const first = supplier.getOrInitialize(toNamedAggregate('sales.Order'))
    const same = supplier.getOrInitialize(toNamedAggregate('sales.Order', 'ignored-context'))
    const viaObject = supplier.getOrInitialize({
      contextName: 'sales',
      aggregateName: 'Order',
      id: 'order-1',
    } as never)
    const other = supplier.getOrInitialize(toNamedAggregate('sales.Invoice'))
    const otherContext = supplier.getOrInitialize(toNamedAggregate('billing.Order'))
    expect(same).toBe(first)
    expect(viaObject).toBe(first)
    expect(other).not.toBe(first)
    expect(otherContext).not.toBe(first)
    expect(supplier.size).toBe(3)
    await supplier.stopGracefully()
  })

  it('initializes one cached scheduler under many concurrent lookups', async () => {
    const supplier = new DefaultAggregateSchedulerSupplier('worker', 1)
    const aggregate = toNamedAggregate('sales.Order')
    const lookups = await Promise.all(
      Array.from({ length: 64 }, async (_, i) => {
        for (let hop = 0; hop < i % 5; hop++) await Promise.resolve()
        return supplier.getOrInitialize(aggregate)
      }),
    )
    expect(new Set(lookups).size).toBe(1)
    await supplier.stopGracefully()
  })

  it('names each scheduler <supplier name>-<aggregateName> with the supplier parallelism', async () => {
    const supplier = new DefaultAggregateSchedulerSupplier('worker', 3)
    const scheduler = supplier.getOrInitialize(toNamedAggregate('sales.Order'))
    expect(scheduler.name).toBe('worker-Order')
    expect(scheduler.parallelism).toBe(3)
    await expect(scheduler.schedule(() => 'ran')).resolves.toBe('ran')
    await supplier.stopGracefully()
  })

  it('stopGracefully disposes cached schedulers and rejects re-initialization with Wow message', async () => {
    const supplier = new DefaultAggregateSchedulerSupplier('worker', 1)
    const aggregate = toNamedAggregate('sales.Order')
    const scheduler = supplier.getOrInitialize(aggregate)
    await supplier.stopGracefully()
    expect(scheduler.isDisposed).toBe(true)
    expect(supplier.size).toBe(0)
    expect(() => supplier.getOrInitialize(aggregate)).toThrow(IllegalStateError)
    expect(() => supplier.getOrInitialize(aggregate)).toThrow(
      'Aggregate scheduler supplier[worker] has stopped.',
    )
    await expect(supplier.stopGracefully()).resolves.toBeUndefined()
  })

  it('stopGracefully is memoised: every caller gets the same promise, abandoning one changes nothing', async () => {
    const supplier = new DefaultAggregateSchedulerSupplier('worker', 1)
    const scheduler = supplier.getOrInitialize(toNamedAggregate('sales.Order'))
    const release = gate()
    const work = scheduler.schedule(() => release.promise)
    await flush()
    const abandoned = supplier.stopGracefully()
    const observed = supplier.stopGracefully()
    expect(observed).toBe(abandoned)
    let done = false
    void observed.then(() => {
      done = true
    })
    await flush()
    expect(done).toBe(false) // running work drains first
    release.open()
    await work
    await observed
    expect(scheduler.isDisposed).toBe(true)
  })

  it('is cold: nothing is disposed before the first stop call', async () => {
    const supplier = new DefaultAggregateSchedulerSupplier('worker', 1)
    const scheduler = supplier.getOrInitialize(toNamedAggregate('sales.Order'))
    await flush()
    expect(scheduler.isDisposed).toBe(false)
    expect(supplier.isStopped).toBe(false)
    await supplier.stopGracefully()
  })

  it('forceStop disposes every scheduler at once and aborts running work', async () => {
    const supplier = new DefaultAggregateSchedulerSupplier('worker', 1)
    const order = supplier.getOrInitialize(toNamedAggregate('sales.Order'))
    const invoice = supplier.getOrInitialize(toNamedAggregate('sales.Invoice'))
    let signal: AbortSignal | undefined
    void order.schedule((s) => {
      signal = s
      return new Promise(() => {})
    })
    await flush()
    supplier.forceStop()
    expect(order.isDisposed).toBe(true)
    expect(invoice.isDisposed).toBe(true)
    expect(signal?.aborted).toBe(true)
    expect(() => supplier.getOrInitialize(toNamedAggregate('sales.Order'))).toThrow(
      'Aggregate scheduler supplier[worker] has stopped.',
    )
    supplier.forceStop() // harmless again
    await expect(supplier.stopGracefully()).resolves.toBeUndefined()
  })

  it('forceStop takes over a graceful stop in progress: pending graceful callers resolve', async () => {
    const supplier = new DefaultAggregateSchedulerSupplier('worker', 1)
    const scheduler = supplier.getOrInitialize(toNamedAggregate('sales.Order'))
    void scheduler.schedule(() => new Promise(() => {})) // never settles
    await flush()
    const graceful = supplier.stopGracefully()
    await flush()
    supplier.forceStop()
    await expect(graceful).resolves.toBeUndefined()
    expect(scheduler.isDisposed).toBe(true)
  })
})

describe('BorrowedAggregateSchedulerSupplier', () => {
  function recording(): AggregateSchedulerSupplier & { graceful: number; forced: number } {
    return {
      graceful: 0,
      forced: 0,
      getOrInitialize: () => immediateScheduler,
      stopGracefully() {
        this.graceful++
        return Promise.resolve()
      },
      forceStop() {
        this.forced++
      },
    }
  }

  it('passes getOrInitialize through', async () => {
    const owner = new DefaultAggregateSchedulerSupplier('worker', 1)
    const borrowed = new BorrowedAggregateSchedulerSupplier(owner)
    const aggregate = toNamedAggregate('sales.Order')
    expect(borrowed.getOrInitialize(aggregate)).toBe(owner.getOrInitialize(aggregate))
    await owner.stopGracefully()
  })

  it('makes stopGracefully and forceStop no-ops: only the owner stops the real supplier', async () => {
    const owner = recording()
    const borrowed = new BorrowedAggregateSchedulerSupplier(owner)
    await borrowed.stopGracefully()
    borrowed.forceStop()
    expect(owner.graceful).toBe(0)
    expect(owner.forced).toBe(0)
    expect(borrowed.getOrInitialize(toNamedAggregate('sales.Order'))).toBe(immediateScheduler)
  })

  it('rejects a delegate that is not a supplier', () => {
    expect(() => new BorrowedAggregateSchedulerSupplier({} as never)).toThrow(TypeError)
  })
})
