import {
  createRuntime,
  createTestClock,
  isCancelledError,
  PluginMissingError,
  type RuntimeEvent,
  run,
  settle,
  shutdown,
  subscribe,
  type TaskContext,
} from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import {
  type AggregateSchedulerSupplier,
  createAggregateScheduling,
  DefaultAggregateSchedulerSupplier,
  toGroupKey,
  withAggregate,
} from '../src/index.js'
import { flush, flushTimes, gate } from './helpers.js'

/** A body the test finishes by hand, recording when it started and ended. */
function controlled(log: string[], label: string, done: Promise<void> = Promise.resolve()) {
  return async (_ctx: TaskContext) => {
    log.push(`start ${label}`)
    await done
    log.push(`end ${label}`)
    return label
  }
}

describe('withAggregate', () => {
  it('validates at bind time: a missing id, a bad aggregate or a non-function throws TypeError', () => {
    const body = async () => 1
    expect(() => withAggregate(body, { aggregate: 'sales.Order' } as never)).toThrow(TypeError)
    expect(() => withAggregate(body, { aggregate: 'sales.Order', id: undefined } as never)).toThrow(
      /id must be the aggregate id as a string, got undefined/,
    )
    expect(() => withAggregate(body, { aggregate: 'Order', id: 'x' })).toThrow(TypeError)
    expect(() => withAggregate(42 as never, { aggregate: 'sales.Order', id: 'x' })).toThrow(
      TypeError,
    )
    expect(() => withAggregate(body, undefined as never)).toThrow(TypeError)
  })

  it('fails loudly without the plugin, naming it', async () => {
    const runtime = createRuntime()
    const outcome = await settle(
      run(
        runtime,
        withAggregate(async () => 1, { aggregate: 'sales.Order', id: 'order-1' }),
      ),
    )
    expect(outcome.status).toBe('error')
    const error = (outcome as { error: unknown }).error
    expect(error).toBeInstanceOf(PluginMissingError)
    expect((error as Error).message).toContain('createAggregateScheduling()')
  })

  it('gives the task a key naming the aggregate and id', async () => {
    const runtime = createRuntime({ plugins: [createAggregateScheduling({ parallelism: 4 })] })
    const events: RuntimeEvent[] = []
    subscribe(runtime, (e) => events.push(e))
    await run(
      runtime,
      withAggregate(async () => 1, { aggregate: 'sales.Order', id: 'order-1' }),
    )
    const created = events.find((e) => e.type === 'task:created')
    expect(created).toMatchObject({ key: 'sales.Order#order-1' })
    await shutdown(runtime)
  })
})

describe('createAggregateScheduling', () => {
  it('runs tasks of one id one at a time, in run() order', async () => {
    const runtime = createRuntime({ plugins: [createAggregateScheduling({ parallelism: 16 })] })
    const log: string[] = []
    const gates = [gate(), gate(), gate()]
    const tasks = gates.map((g, i) =>
      run(
        runtime,
        withAggregate(controlled(log, `${i}`, g.promise), {
          aggregate: 'sales.Order',
          id: 'order-1',
        }),
      ),
    )
    await flushTimes(2)
    expect(log).toEqual(['start 0'])
    expect(tasks[1]!.state).toBe('queued')
    expect(tasks[2]!.state).toBe('queued')
    gates[2]!.open()
    gates[1]!.open()
    gates[0]!.open()
    await Promise.all(tasks)
    expect(log).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2'])
    await shutdown(runtime)
  })

  it('runs different groups concurrently, within the runtime concurrency', async () => {
    const ids = ['order-1', 'order-2', 'order-3', 'order-4']
    expect(new Set(ids.map((id) => toGroupKey(id, 16))).size).toBe(4)
    const runtime = createRuntime({
      concurrency: 2,
      plugins: [createAggregateScheduling({ parallelism: 16, schedulerParallelism: 8 })],
    })
    const release = gate()
    let active = 0
    let maxActive = 0
    const tasks = ids.map((id) =>
      run(
        runtime,
        withAggregate(
          async () => {
            active++
            maxActive = Math.max(maxActive, active)
            await release.promise
            active--
          },
          { aggregate: 'sales.Order', id },
        ),
      ),
    )
    await flushTimes(3)
    expect(active).toBe(2)
    release.open()
    await Promise.all(tasks)
    expect(maxActive).toBe(2)
    await shutdown(runtime)
  })

  it("caps each named aggregate at its scheduler's lanes; other aggregates are not held back", async () => {
    const runtime = createRuntime({
      plugins: [createAggregateScheduling({ parallelism: 16, schedulerParallelism: 1 })],
    })
    const release = gate()
    const log: string[] = []
    const order1 = run(
      runtime,
      withAggregate(controlled(log, 'order-1', release.promise), {
        aggregate: 'sales.Order',
        id: 'order-1',
      }),
    )
    const order2 = run(
      runtime,
      withAggregate(controlled(log, 'order-2'), { aggregate: 'sales.Order', id: 'order-2' }),
    )
    const invoice = run(
      runtime,
      withAggregate(controlled(log, 'invoice-1'), { aggregate: 'sales.Invoice', id: 'invoice-1' }),
    )
    await invoice
    expect(log).toEqual(['start order-1', 'start invoice-1', 'end invoice-1'])
    expect(order2.state).toBe('queued')
    release.open()
    await Promise.all([order1, order2])
    await shutdown(runtime)
  })

  it('passes unbound tasks straight to the runtime', async () => {
    const runtime = createRuntime({
      concurrency: 1,
      plugins: [createAggregateScheduling({ parallelism: 4 })],
    })
    const release = gate()
    const bound = run(
      runtime,
      withAggregate(() => release.promise, { aggregate: 'sales.Order', id: 'order-1' }),
    )
    await flushTimes(2)
    expect(bound.state).toBe('running')
    const plain = run(runtime, async () => 'plain')
    expect(plain.state).toBe('queued') // the runtime's one slot is taken by the bound task
    release.open()
    await bound
    await expect(plain).resolves.toBe('plain')
    await shutdown(runtime)
  })

  it('a cancelled waiting task leaves its group at once', async () => {
    const scheduling = createAggregateScheduling({ parallelism: 8 })
    const runtime = createRuntime({ plugins: [scheduling] })
    const log: string[] = []
    const first = gate()
    const route = { aggregate: 'sales.Order', id: 'order-1' } as const
    const a = run(runtime, withAggregate(controlled(log, 'a', first.promise), route))
    const b = run(runtime, withAggregate(controlled(log, 'b'), route))
    const c = run(runtime, withAggregate(controlled(log, 'c'), route))
    await flushTimes(2)
    expect(scheduling.stats().aggregates[0]).toMatchObject({ queued: 2, inFlight: 1, dropped: 0 })
    b.cancel()
    expect(b.state).toBe('cancelled')
    // Out of its group's queue before a runs on: only c still waits behind a.
    expect(scheduling.stats().aggregates[0]).toMatchObject({ queued: 1, inFlight: 1, dropped: 1 })
    await expect(b.promise).rejects.toSatisfy(isCancelledError)
    first.open()
    await Promise.all([a, c])
    expect(log).toEqual(['start a', 'end a', 'start c', 'end c'])
    await shutdown(runtime)
  })

  it('a cancelled task whose turn came (waiting for a lane) frees its group at once', async () => {
    const scheduling = createAggregateScheduling({ parallelism: 8, schedulerParallelism: 1 })
    const runtime = createRuntime({ plugins: [scheduling] })
    const release = gate()
    const log: string[] = []
    // order-1 holds the only lane of Order; order-2's head waits for it.
    const holder = run(
      runtime,
      withAggregate(controlled(log, 'holder', release.promise), {
        aggregate: 'sales.Order',
        id: 'order-1',
      }),
    )
    const waiting = run(
      runtime,
      withAggregate(controlled(log, 'waiting'), { aggregate: 'sales.Order', id: 'order-2' }),
    )
    const next = run(
      runtime,
      withAggregate(controlled(log, 'next'), { aggregate: 'sales.Order', id: 'order-2' }),
    )
    await flushTimes(2)
    waiting.cancel()
    release.open()
    await Promise.all([holder, next])
    expect(log).toEqual(['start holder', 'end holder', 'start next', 'end next'])
    expect(scheduling.stats().aggregates[0]).toMatchObject({ dropped: 1, completed: 2 })
    await shutdown(runtime)
  })

  it('a failing task does not stop its group', async () => {
    const runtime = createRuntime({ plugins: [createAggregateScheduling({ parallelism: 8 })] })
    const route = { aggregate: 'sales.Order', id: 'order-1' } as const
    const failure = new Error('rejected command')
    const failing = run(
      runtime,
      withAggregate(async () => {
        throw failure
      }, route),
    )
    const after = run(
      runtime,
      withAggregate(async () => 'after', route),
    )
    await expect(failing).rejects.toBe(failure)
    await expect(after).resolves.toBe('after')
    await shutdown(runtime)
  })

  it('a retried task keeps its group serial', async () => {
    const runtime = createRuntime({ plugins: [createAggregateScheduling({ parallelism: 8 })] })
    const route = { aggregate: 'sales.Order', id: 'order-1' } as const
    let active = 0
    let maxActive = 0
    let attempts = 0
    const body = async () => {
      active++
      maxActive = Math.max(maxActive, active)
      await flush()
      active--
    }
    const flaky = run(
      runtime,
      withAggregate(async () => {
        await body()
        if (++attempts < 3) throw new Error('flaky')
        return 'ok'
      }, route),
      { retry: { attempts: 3, delay: 0 } },
    )
    const others = Array.from({ length: 3 }, () => run(runtime, withAggregate(body, route)))
    await expect(flaky).resolves.toBe('ok')
    await Promise.all(others)
    expect(maxActive).toBe(1)
    await shutdown(runtime)
  })

  it('holds at most parallelism group queues for 10 000 ids over 16 groups', async () => {
    const scheduling = createAggregateScheduling({ parallelism: 16, schedulerParallelism: 4 })
    const runtime = createRuntime({ concurrency: 8, plugins: [scheduling] })
    const tasks = []
    let peak = 0
    for (let i = 0; i < 10_000; i++) {
      tasks.push(
        run(
          runtime,
          withAggregate(async () => {}, { aggregate: 'sales.Order', id: `order-${i}` }),
        ),
      )
      if (i % 100 === 0) peak = Math.max(peak, scheduling.stats().groups)
    }
    const sampler = setInterval(() => {
      peak = Math.max(peak, scheduling.stats().groups)
    }, 1)
    await Promise.all(tasks)
    clearInterval(sampler)
    expect(peak).toBeLessThanOrEqual(16)
    const stats = scheduling.stats()
    expect(stats.groups).toBe(0)
    expect(stats.aggregates).toHaveLength(1)
    expect(stats.aggregates[0]).toMatchObject({ dispatched: 10_000, completed: 10_000, queued: 0 })
    await shutdown(runtime)
  })

  it('shutdown drains queued group work and stops the supplier it owns', async () => {
    const scheduling = createAggregateScheduling({ parallelism: 4 })
    const runtime = createRuntime({ plugins: [scheduling] })
    const log: string[] = []
    const route = { aggregate: 'sales.Order', id: 'order-1' } as const
    const tasks = [0, 1, 2].map((i) =>
      run(runtime, withAggregate(controlled(log, `${i}`, flush()), route)),
    )
    const report = await shutdown(runtime, { mode: 'drain' })
    expect(report.completed).toBe(3)
    await Promise.all(tasks)
    expect(log).toHaveLength(6)
    const supplier = scheduling.schedulerSupplier!
    expect(() =>
      supplier.getOrInitialize({ contextName: 'sales', aggregateName: 'Order' }),
    ).toThrow(/has stopped/)
  })

  it('a supplier passed in is borrowed: shutdown does not stop it', async () => {
    const supplier = new DefaultAggregateSchedulerSupplier('shared', 2)
    const runtime = createRuntime({ plugins: [createAggregateScheduling({ supplier })] })
    await run(
      runtime,
      withAggregate(async () => 1, { aggregate: 'sales.Order', id: 'order-1' }),
    )
    await shutdown(runtime)
    expect(supplier.isStopped).toBe(false)
    await supplier.stopGracefully()
  })

  it('shutdown past its deadline with a body that ignores its signal force-stops the owned supplier', async () => {
    const clock = createTestClock()
    const scheduling = createAggregateScheduling({ parallelism: 4 })
    const runtime = createRuntime({ clock, plugins: [scheduling] })
    let signal: AbortSignal | undefined
    const stubborn = run(
      runtime,
      withAggregate(
        (ctx) => {
          signal = ctx.signal
          return new Promise<never>(() => {}) // ignores its signal
        },
        { aggregate: 'sales.Order', id: 'order-1' },
      ),
    )
    await flushTimes(2)
    const stopped = shutdown(runtime, { mode: 'drain', deadline: 100 })
    await clock.advance(100)
    const report = await stopped
    expect(report.abandoned).toBe(1)
    expect(stubborn.state).toBe('cancelled')
    expect(signal?.aborted).toBe(true)
    expect(scheduling.schedulerSupplier).toBeInstanceOf(DefaultAggregateSchedulerSupplier)
    expect((scheduling.schedulerSupplier as DefaultAggregateSchedulerSupplier).isStopped).toBe(true)
  })

  it('rejects bad options early and refuses a second runtime', () => {
    expect(() => createAggregateScheduling({ parallelism: 0 })).toThrow(RangeError)
    expect(() => createAggregateScheduling({ schedulerParallelism: 1.5 })).toThrow(RangeError)
    expect(() => createAggregateScheduling({ statsInterval: -1 })).toThrow(RangeError)
    const supplier: AggregateSchedulerSupplier = new DefaultAggregateSchedulerSupplier('s', 1)
    expect(() => createAggregateScheduling({ supplier, schedulerParallelism: 2 })).toThrow(
      TypeError,
    )
    expect(() => createAggregateScheduling({ supplier: {} as never })).toThrow(TypeError)
    const plugin = createAggregateScheduling()
    expect(() => plugin.stats()).toThrow(/needs the plugin installed/)
    createRuntime({ plugins: [plugin] })
    expect(() => createRuntime({ plugins: [plugin] })).toThrow(/once per runtime/)
  })
})

describe('createAggregateScheduling: observability', () => {
  it('stats() counts per named aggregate: queued, in flight, completed, failed, latency', async () => {
    const clock = createTestClock()
    const scheduling = createAggregateScheduling({ parallelism: 8 })
    const runtime = createRuntime({ clock, plugins: [scheduling] })
    const release = gate()
    const route = { aggregate: 'sales.Order', id: 'order-1' } as const
    const first = run(
      runtime,
      withAggregate(async (ctx) => {
        await ctx.sleep(40)
        await release.promise
      }, route),
    )
    const second = run(
      runtime,
      withAggregate(async () => {
        throw new Error('no')
      }, route),
    )
    await flushTimes(2)
    expect(scheduling.stats().aggregates[0]).toMatchObject({
      aggregate: 'sales.Order',
      queued: 1,
      inFlight: 1,
    })
    await clock.advance(40)
    release.open()
    await first
    await settle(second)
    const order = scheduling.stats().aggregates[0]!
    expect(order).toMatchObject({ dispatched: 2, completed: 1, failed: 1, queued: 0, inFlight: 0 })
    expect(order.latency.count).toBe(2)
    expect(order.latency.max).toBe(40)
    expect(order.latency.p50).toBeLessThanOrEqual(order.latency.p99)
    expect(order.latency.p99).toBeLessThanOrEqual(order.latency.max)
    expect(order.longestGroupWait).toBe(40)
    await shutdown(runtime)
  })

  it('emits no scheduler:stats events by default', async () => {
    const clock = createTestClock()
    const runtime = createRuntime({
      clock,
      plugins: [createAggregateScheduling({ parallelism: 4 })],
    })
    const types = new Set<string>()
    subscribe(runtime, (e) => types.add(e.type))
    await run(
      runtime,
      withAggregate(async () => 1, { aggregate: 'sales.Order', id: 'order-1' }),
    )
    await clock.advance(10_000)
    await shutdown(runtime)
    expect(types.has('scheduler:stats')).toBe(false)
  })

  it('emits scheduler:stats at the configured interval, labelled by named aggregate only, with the drain time', async () => {
    const clock = createTestClock()
    const runtime = createRuntime({
      clock,
      plugins: [createAggregateScheduling({ parallelism: 4, statsInterval: 1_000 })],
    })
    const stats: Array<Extract<RuntimeEvent, { type: 'scheduler:stats' }>> = []
    subscribe(runtime, (e) => {
      if (e.type === 'scheduler:stats') stats.push(e)
    })
    const task = run(
      runtime,
      withAggregate((ctx) => ctx.sleep(1_500), { aggregate: 'sales.Order', id: 'order-42' }),
    )
    await clock.advance(1_000)
    expect(stats).toHaveLength(1)
    expect(stats[0]!.aggregates[0]).toMatchObject({ aggregate: 'sales.Order', inFlight: 1 })
    const stopped = shutdown(runtime)
    await clock.advance(1_000)
    await task
    await stopped
    const last = stats.at(-1)!
    expect(last.aggregates[0]).toMatchObject({ completed: 1, lastDrain: 500 })
    expect(JSON.stringify(stats)).not.toContain('order-42')
    expect(clock.pending).toBe(0)
  })

  it('measures the last drain from a draining shutdown without any stats events', async () => {
    const clock = createTestClock()
    const scheduling = createAggregateScheduling({ parallelism: 4 })
    const runtime = createRuntime({ clock, plugins: [scheduling] })
    const task = run(
      runtime,
      withAggregate((ctx) => ctx.sleep(800), { aggregate: 'sales.Order', id: 'order-7' }),
    )
    await clock.advance(300)
    const stopped = shutdown(runtime)
    await clock.advance(500)
    await task
    await stopped
    expect(scheduling.stats().aggregates[0]).toMatchObject({ completed: 1, lastDrain: 500 })
  })
})
