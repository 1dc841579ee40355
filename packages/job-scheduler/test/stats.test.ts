import { describe, expect, it } from 'vitest'
import { AggregateDispatcher, DefaultAggregateSchedulerSupplier } from '../src/index.js'
import { defaultNow, StatsRecorder } from '../src/internal/stats-recorder.js'
import { exchange, flushTimes, gate, type TestExchange } from './helpers.js'

/** A clock the handlers advance, so latency figures are exact and not wall-clock dependent. */
function manualClock() {
  let t = 0
  return {
    now: () => t,
    advance(ms: number) {
      t += ms
    },
  }
}

describe('stats()', () => {
  it('counts match what was dispatched, per named aggregate, never per id or group', async () => {
    const clock = manualClock()
    const d = new AggregateDispatcher<TestExchange>({
      name: 'orders',
      parallelism: 8,
      now: clock.now,
      onError: () => {},
      schedulerSupplier: new DefaultAggregateSchedulerSupplier('w', 2),
      handle: (e) => {
        clock.advance(1 + (e.seq % 10))
        if (e.seq % 25 === 0) throw new Error('rejected command')
      },
    })
    d.prepare()
    d.start()
    for (let i = 0; i < 100; i++) d.dispatch(exchange(`order-${i % 13}`, i))
    for (let i = 0; i < 40; i++) d.dispatch(exchange(`invoice-${i}`, i, 'Invoice'))
    await d.stopGracefully()
    const stats = d.stats()
    expect(stats.name).toBe('orders')
    expect(stats.groups).toBe(0)
    expect(stats.aggregates.map((a) => a.aggregate).sort()).toEqual([
      'sales.Invoice',
      'sales.Order',
    ])
    const order = stats.aggregates.find((a) => a.aggregateName === 'Order')!
    expect(order).toMatchObject({
      contextName: 'sales',
      dispatched: 100,
      completed: 96,
      failed: 4,
      dropped: 0,
      queued: 0,
      inFlight: 0,
    })
    expect(order.latency.count).toBe(100)
    const invoice = stats.aggregates.find((a) => a.aggregateName === 'Invoice')!
    expect(invoice.dispatched).toBe(40)
    expect(invoice.completed + invoice.failed).toBe(40)
    expect(JSON.stringify(stats)).not.toContain('order-')
  })

  it('latency figures are present and ordered: p50 ≤ p99 ≤ max', async () => {
    const clock = manualClock()
    const d = new AggregateDispatcher<TestExchange>({
      name: 'orders',
      parallelism: 4,
      now: clock.now,
      schedulerSupplier: new DefaultAggregateSchedulerSupplier('w', 1),
      handle: (e) => clock.advance(e.seq === 99 ? 500 : 10),
    })
    d.prepare()
    d.start()
    for (let i = 0; i < 100; i++) d.dispatch(exchange('order-1', i))
    await d.stopGracefully()
    const { latency } = d.stats().aggregates[0]!
    expect(latency.count).toBe(100)
    expect(latency.max).toBe(500)
    expect(latency.p50).toBeGreaterThan(0)
    expect(latency.p50).toBeLessThanOrEqual(latency.p99)
    expect(latency.p99).toBeLessThanOrEqual(latency.max)
    // Buckets are ~9 % wide: the median of 10 ms samples is reported near 10 ms.
    expect(latency.p50).toBeGreaterThanOrEqual(10)
    expect(latency.p50).toBeLessThan(11.5)
  })

  it('reports queued and in flight while work is pending, the longest group wait and the last drain', async () => {
    const clock = manualClock()
    const release = gate()
    const d = new AggregateDispatcher<TestExchange>({
      name: 'orders',
      parallelism: 4,
      now: clock.now,
      schedulerSupplier: new DefaultAggregateSchedulerSupplier('w', 4),
      handle: (e) => (e.seq === 0 ? release.promise : undefined),
    })
    d.prepare()
    d.start()
    d.dispatch(exchange('order-1', 0))
    d.dispatch(exchange('order-1', 1))
    d.dispatch(exchange('order-1', 2))
    await flushTimes(2)
    expect(d.stats().aggregates[0]).toMatchObject({ queued: 2, inFlight: 1, lastDrain: undefined })
    expect(d.stats().groups).toBe(1)
    d.quiesce()
    clock.advance(30)
    release.open()
    await d.stopGracefully()
    const after = d.stats().aggregates[0]!
    expect(after).toMatchObject({ queued: 0, inFlight: 0, completed: 3 })
    expect(after.longestGroupWait).toBe(30)
    expect(after.lastDrain).toBe(30)
  })

  it('memory does not grow with distinct ids: 10 000 ids give the same figures as 10', async () => {
    async function run(ids: number) {
      const d = new AggregateDispatcher<TestExchange>({
        name: 'orders',
        parallelism: 16,
        now: () => 0,
        schedulerSupplier: new DefaultAggregateSchedulerSupplier('w', 4),
        handle: () => {},
      })
      d.prepare()
      d.start()
      for (let i = 0; i < 10_000; i++) d.dispatch(exchange(`order-${i % ids}`, i))
      await d.stopGracefully()
      return d.stats()
    }
    const few = await run(10)
    const many = await run(10_000)
    expect(many.aggregates).toHaveLength(1)
    expect(JSON.stringify(many).length).toBe(JSON.stringify(few).length)
    expect(many.groups).toBe(0)
  })
})

describe('StatsRecorder admission stamps', () => {
  it('with the system clock, a synchronous burst shares one reading per 16 admissions; a microtask later reads again', async () => {
    const recorder = new StatsRecorder(defaultNow)
    const stamps: number[] = []
    const spin = (ms: number) => {
      const until = defaultNow() + ms
      while (defaultNow() < until) {}
    }
    for (let i = 0; i < 33; i++) {
      stamps.push(recorder.sharedNow())
      spin(0.05)
    }
    // Readings 0, 16 and 32 are fresh; the others repeat the one before.
    for (let i = 0; i < 33; i++) {
      if (i % 16 === 0) {
        if (i > 0) expect(stamps[i]).toBeGreaterThan(stamps[i - 1]!)
      } else {
        expect(stamps[i]).toBe(stamps[i - 1])
      }
    }
    await Promise.resolve()
    spin(0.05)
    expect(recorder.sharedNow()).toBeGreaterThan(stamps[32]!)
  })

  it('reads a custom clock at every admission (a test may move it between two dispatches)', () => {
    let t = 0
    const recorder = new StatsRecorder(() => t)
    const stamps: number[] = []
    for (let i = 0; i < 20; i++) {
      t = i * 10
      stamps.push(recorder.sharedNow())
    }
    expect(stamps).toEqual(Array.from({ length: 20 }, (_, i) => i * 10))
  })
})
