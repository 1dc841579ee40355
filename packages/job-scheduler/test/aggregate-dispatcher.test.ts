import { IllegalStateError } from '@vega/job-core'
import { describe, expect, it, vi } from 'vitest'
import {
  AggregateDispatcher,
  type AggregateDispatcherOptions,
  type AggregateSchedulerSupplier,
  createParallelScheduler,
  DefaultAggregateSchedulerSupplier,
  immediateScheduler,
  type ParallelScheduler,
  toGroupKey,
} from '../src/index.js'
import { exchange, flush, flushTimes, gate, never, orderId, type TestExchange } from './helpers.js'

function dispatcher(
  options: Partial<AggregateDispatcherOptions<TestExchange>> = {},
): AggregateDispatcher<TestExchange> {
  return new AggregateDispatcher<TestExchange>({
    name: 'recording-dispatcher',
    parallelism: 2,
    handle: () => {},
    ...options,
  })
}

function running(options: Partial<AggregateDispatcherOptions<TestExchange>> = {}) {
  const d = dispatcher(options)
  d.prepare()
  d.start()
  return d
}

/** An async source the test pushes into; records return() calls. */
function pushSource() {
  const values: TestExchange[] = []
  let wake: (() => void) | undefined
  let ended = false
  const calls: string[] = []
  const iterable: AsyncIterable<TestExchange> = {
    [Symbol.asyncIterator]() {
      calls.push('subscribe')
      return {
        async next() {
          calls.push('request')
          while (values.length === 0 && !ended) await new Promise<void>((r) => (wake = r))
          const value = values.shift()
          return value === undefined ? { done: true, value: undefined } : { done: false, value }
        },
        async return() {
          calls.push('cancel-source')
          ended = true
          wake?.()
          return { done: true, value: undefined }
        },
      }
    },
  }
  return {
    iterable,
    calls,
    push(value: TestExchange) {
      values.push(value)
      wake?.()
    },
    end() {
      ended = true
      wake?.()
    },
  }
}

describe('AggregateDispatcher: routing and ordering', () => {
  it('start subscribes and routes exchanges through handle', async () => {
    const source = pushSource()
    const handled: TestExchange[] = []
    const d = running({ source: source.iterable, handle: (e) => void handled.push(e) })
    const first = exchange('order-1', 1)
    source.push(first)
    await flushTimes(3)
    expect(handled).toEqual([first])
    expect(source.calls.slice(0, 2)).toEqual(['subscribe', 'request'])
    await d.stopGracefully()
  })

  it('prepare subscribes without requesting; start opens demand', async () => {
    const source = pushSource()
    const d = dispatcher({ source: source.iterable })
    d.prepare()
    await flush()
    expect(source.calls).toEqual(['subscribe'])
    d.start()
    await flush()
    expect(source.calls).toEqual(['subscribe', 'request'])
    d.forceStop()
  })

  it('runs exchanges of one id one at a time, in arrival order', async () => {
    const gates = [gate(), gate(), gate()]
    const log: string[] = []
    let active = 0
    let maxActive = 0
    const d = running({
      parallelism: 16,
      schedulerSupplier: new DefaultAggregateSchedulerSupplier('w', 8),
      handle: async (e) => {
        active++
        maxActive = Math.max(maxActive, active)
        log.push(`start ${e.seq}`)
        await gates[e.seq]!.promise
        log.push(`end ${e.seq}`)
        active--
      },
    })
    for (const seq of [0, 1, 2]) d.dispatch(exchange('order-1', seq))
    await flushTimes(2)
    expect(log).toEqual(['start 0'])
    gates[2]!.open()
    gates[1]!.open()
    await flushTimes(2)
    expect(log).toEqual(['start 0'])
    gates[0]!.open()
    await d.stopGracefully()
    expect(log).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2'])
    expect(maxActive).toBe(1)
  })

  it('a waiting aggregate does not delay another aggregate in another group', async () => {
    expect(toGroupKey('waiting', 16)).not.toBe(toGroupKey('other', 16))
    const release = gate()
    const otherHandled = gate()
    const d = running({
      parallelism: 16,
      schedulerSupplier: new DefaultAggregateSchedulerSupplier('w', 2),
      handle: (e) => (e.aggregateId.id === 'waiting' ? release.promise : otherHandled.open()),
    })
    d.dispatch(exchange('waiting', 0))
    d.dispatch(exchange('other', 1))
    await otherHandled.promise
    release.open()
    await d.stopGracefully()
  })

  it('groups with more work than lanes take turns: a group that finishes gives its lane to one that waits', async () => {
    // Three ids in three groups over one lane: whatever each group still
    // holds, the lane goes round in arrival order.
    const ids = ['a', 'b', 'c']
    expect(new Set(ids.map((id) => toGroupKey(id, 16))).size).toBe(3)
    const log: string[] = []
    let inside = 0
    let peak = 0
    const d = running({
      parallelism: 16,
      schedulerSupplier: new DefaultAggregateSchedulerSupplier('w', 1),
      handle: async (e) => {
        peak = Math.max(peak, ++inside)
        log.push(`${e.aggregateId.id}${e.seq}`)
        await null
        inside--
      },
    })
    for (const seq of [0, 1, 2]) for (const id of ids) d.dispatch(exchange(id, seq))
    await d.stopGracefully()
    expect(log).toEqual(['a0', 'b0', 'c0', 'a1', 'b1', 'c1', 'a2', 'b2', 'c2'])
    expect(peak).toBe(1)
  })

  it('a group alone on its lane runs its exchanges back to back, each after the previous settled', async () => {
    const log: string[] = []
    const d = running({
      parallelism: 16,
      schedulerSupplier: new DefaultAggregateSchedulerSupplier('w', 1),
      handle: async (e) => {
        log.push(`start ${e.seq}`)
        await null
        log.push(`end ${e.seq}`)
      },
    })
    for (const seq of [0, 1, 2]) d.dispatch(exchange('order-1', seq))
    await d.stopGracefully()
    expect(log).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2'])
    expect(d.stats().aggregates[0]).toMatchObject({ completed: 3, inFlight: 0, queued: 0 })
  })

  it('a group whose exchanges alternate between named aggregates stays serial and in order, each on its own scheduler, and a failure mid-run resumes', async () => {
    const supplier = new DefaultAggregateSchedulerSupplier('w', 1)
    const log: string[] = []
    const errors: number[] = []
    const wrongLane: number[] = []
    let inside = 0
    let peak = 0
    const d = running({
      parallelism: 16,
      schedulerSupplier: supplier,
      onError: (_error, e) => errors.push(e.seq),
      handle: async (e) => {
        peak = Math.max(peak, ++inside)
        log.push(`${e.aggregateId.aggregateName}${e.seq}`)
        // It holds a lane of its own aggregate's scheduler, not of the one before it.
        const own = supplier.getOrInitialize(e.aggregateId) as ParallelScheduler
        if (own.running !== 1) wrongLane.push(e.seq)
        await null
        inside--
        if (e.seq === 4) throw new Error('rejected command')
      },
    })
    const kinds = ['Order', 'Order', 'Invoice', 'Invoice', 'Order', 'Order', 'Invoice', 'Order']
    kinds.forEach((kind, seq) => {
      d.dispatch(exchange('order-1', seq, kind))
    })
    await d.stopGracefully()
    expect(log).toEqual(kinds.map((kind, seq) => `${kind}${seq}`))
    expect(peak).toBe(1)
    expect(wrongLane).toEqual([])
    expect(errors).toEqual([4])
    const stats = Object.fromEntries(d.stats().aggregates.map((a) => [a.aggregateName, a]))
    expect(stats.Order).toMatchObject({
      dispatched: 5,
      completed: 4,
      failed: 1,
      queued: 0,
      inFlight: 0,
    })
    expect(stats.Invoice).toMatchObject({
      dispatched: 3,
      completed: 3,
      failed: 0,
      queued: 0,
      inFlight: 0,
    })
    expect(stats.Order!.latency.count).toBe(5)
    for (const named of [orderId('x', 'Order'), orderId('x', 'Invoice')]) {
      expect((supplier.getOrInitialize(named) as ParallelScheduler).running).toBe(0)
    }
    await supplier.stopGracefully()
  })

  it('ids that collide on a group share one serial queue', async () => {
    // "Aa" and "BB" have the same Java hash code.
    expect(toGroupKey('Aa', 16)).toBe(toGroupKey('BB', 16))
    const release = gate()
    const log: string[] = []
    const d = running({
      parallelism: 16,
      schedulerSupplier: new DefaultAggregateSchedulerSupplier('w', 4),
      handle: async (e) => {
        log.push(e.aggregateId.id)
        if (e.aggregateId.id === 'Aa') await release.promise
      },
    })
    d.dispatch(exchange('Aa', 0))
    d.dispatch(exchange('BB', 1))
    await flushTimes(3)
    expect(log).toEqual(['Aa'])
    expect(d.activeGroups).toBe(1)
    release.open()
    await d.stopGracefully()
    expect(log).toEqual(['Aa', 'BB'])
  })

  it('dispatchers of many aggregate types share a supplier and keep per-aggregate order', async () => {
    const supplier = new DefaultAggregateSchedulerSupplier('shared-dispatch-workers', 2)
    const order = new Map<string, number[]>()
    const inFlight = new Map<string, number>()
    let maxPerScheduler = 0
    const types = 30
    const perType = 200
    const dispatchers = Array.from({ length: types }, (_, type) =>
      running({
        name: `aggregate-type-${type}`,
        parallelism: 4,
        schedulerSupplier: supplier,
        handle: async (e) => {
          const scheduler = e.aggregateId.aggregateName
          inFlight.set(scheduler, (inFlight.get(scheduler) ?? 0) + 1)
          maxPerScheduler = Math.max(maxPerScheduler, inFlight.get(scheduler)!)
          const key = `${type}/${e.aggregateId.id}`
          order.set(key, [...(order.get(key) ?? []), e.seq])
          if (e.seq % 3 === 0) await new Promise((r) => setImmediate(r))
          inFlight.set(scheduler, inFlight.get(scheduler)! - 1)
        },
      }),
    )
    dispatchers.forEach((d, type) => {
      for (let seq = 0; seq < perType; seq++) {
        d.dispatch(exchange(`aggregate-${seq % 7}`, seq, `Type${type}`))
      }
    })
    await Promise.all(dispatchers.map((d) => d.stopGracefully()))
    expect(order.size).toBe(types * 7)
    for (const sequences of order.values()) {
      expect(sequences).toEqual([...sequences].sort((a, b) => a - b))
    }
    expect([...order.values()].flat()).toHaveLength(types * perType)
    expect(maxPerScheduler).toBeLessThanOrEqual(2)
    await supplier.stopGracefully()
  })

  it('holds at most parallelism group queues for 10 000 ids over 16 groups', async () => {
    const d = dispatcher({
      parallelism: 16,
      schedulerSupplier: new DefaultAggregateSchedulerSupplier('w', 4),
      handle: async () => {
        await Promise.resolve()
      },
    })
    d.prepare()
    let peak = 0
    for (let i = 0; i < 10_000; i++) {
      d.dispatch(exchange(`order-${i}`, i))
      peak = Math.max(peak, d.activeGroups)
    }
    expect(peak).toBeLessThanOrEqual(16)
    d.start()
    const sampler = setInterval(() => {
      peak = Math.max(peak, d.activeGroups)
    }, 1)
    await d.stopGracefully()
    clearInterval(sampler)
    expect(peak).toBeLessThanOrEqual(16)
    expect(d.activeGroups).toBe(0)
    expect(d.stats().aggregates[0]?.completed).toBe(10_000)
  })

  it('gives handlers a signal that aborts when their scheduler is disposed', async () => {
    const supplier = new DefaultAggregateSchedulerSupplier('w', 1)
    let signal: AbortSignal | undefined
    const entered = gate()
    const d = running({
      schedulerSupplier: supplier,
      onError: 'resume',
      handle: (_, s) => {
        signal = s
        entered.open()
        return never()
      },
    })
    d.dispatch(exchange('order-1', 0))
    await entered.promise
    expect(signal?.aborted).toBe(false)
    supplier.forceStop()
    expect(signal?.aborted).toBe(true)
    d.forceStop()
  })
})

describe('AggregateDispatcher: lifecycle', () => {
  it('start requires preparation and is idempotent once running', () => {
    const d = dispatcher()
    expect(() => d.start()).toThrow(IllegalStateError)
    expect(() => d.start()).toThrow(
      '[recording-dispatcher] Dispatcher cannot start from state: NEW. Call prepare() first.',
    )
    d.prepare()
    d.start()
    d.start()
    expect(d.state).toBe('RUNNING')
    d.forceStop()
    return expect(d.terminated).resolves.toBeUndefined()
  })

  it('prepare twice throws IllegalStateError naming the dispatcher and the state', () => {
    const d = dispatcher()
    d.prepare()
    expect(() => d.prepare()).toThrow(IllegalStateError)
    expect(() => d.prepare()).toThrow(
      '[recording-dispatcher] Dispatcher can only be prepared once. Current state: PREPARED.',
    )
    d.forceStop()
  })

  it('rejects bad options early', () => {
    expect(() => dispatcher({ parallelism: 0 })).toThrow(RangeError)
    expect(() => dispatcher({ parallelism: 2.5 })).toThrow(RangeError)
    expect(() => dispatcher({ name: '' })).toThrow(TypeError)
    expect(() => dispatcher({ handle: 'nope' as never })).toThrow(TypeError)
    expect(() => dispatcher({ source: [] as never })).toThrow(TypeError)
    expect(() => dispatcher({ onError: 'ignore' as never })).toThrow(TypeError)
  })

  it('dispatch before prepare throws; after prepare it waits for start', async () => {
    const handled: number[] = []
    const d = dispatcher({ handle: (e) => void handled.push(e.seq) })
    expect(() => d.dispatch(exchange('order-1', 0))).toThrow(/state: NEW/)
    d.prepare()
    expect(d.dispatch(exchange('order-1', 1))).toBe(true)
    await flushTimes(2)
    expect(handled).toEqual([])
    d.start()
    await flushTimes(2)
    expect(handled).toEqual([1])
    await d.stopGracefully()
  })

  it('stopGracefully completes at once when nothing is active', async () => {
    const d = running({ source: pushSource().iterable })
    await expect(d.stopGracefully()).resolves.toBeUndefined()
    expect(d.state).toBe('STOPPED')
  })

  it('stopGracefully before prepare stops at once', async () => {
    const d = dispatcher()
    await d.stopGracefully()
    expect(d.state).toBe('STOPPED')
  })

  it('quiesce closes intake and detaches source cancellation; admitted exchanges drain without cancellation', async () => {
    const source = pushSource()
    const release = gate()
    const log: string[] = []
    let signal: AbortSignal | undefined
    const d = running({
      source: source.iterable,
      handle: async (e, s) => {
        signal = s
        log.push(`start ${e.seq}`)
        await release.promise
        log.push(`end ${e.seq}`)
      },
    })
    source.push(exchange('order-1', 0))
    source.push(exchange('order-1', 1))
    await flushTimes(4)
    expect(log).toEqual(['start 0'])
    d.quiesce()
    expect(d.state).toBe('STOPPING')
    expect(source.calls).toContain('cancel-source')
    expect(d.dispatch(exchange('order-1', 2))).toBe(false)
    const stopped = d.stopGracefully()
    expect(d.stopGracefully()).toBe(stopped)
    release.open()
    await stopped
    expect(log).toEqual(['start 0', 'end 0', 'start 1', 'end 1'])
    expect(signal?.aborted).toBe(false)
  })

  it('source termination drains and stops the dispatcher exactly once', async () => {
    async function* three() {
      yield exchange('order-1', 0)
      yield exchange('order-2', 1)
      yield exchange('order-1', 2)
    }
    const handled: number[] = []
    const d = running({ source: three(), handle: (e) => void handled.push(e.seq) })
    await d.terminated
    expect(d.state).toBe('STOPPED')
    expect(handled.sort()).toEqual([0, 1, 2])
    d.quiesce() // harmless afterwards
    await expect(d.stopGracefully()).resolves.toBeUndefined()
  })

  it('pauses pulling from the source at maxInFlight', async () => {
    const source = pushSource()
    const release = gate()
    const d = running({ source: source.iterable, maxInFlight: 2, handle: () => release.promise })
    for (let i = 0; i < 5; i++) source.push(exchange(`order-${i}`, i))
    await flushTimes(5)
    expect(d.stats().aggregates[0]?.dispatched).toBe(2)
    release.open()
    await flushTimes(10)
    expect(d.stats().aggregates[0]?.dispatched).toBe(5)
    await d.stopGracefully()
  })

  it('forceStop returns at once, aborts running handlers, drops queued ones, and never blocks', async () => {
    const entered = gate()
    let signal: AbortSignal | undefined
    const handled: number[] = []
    const d = running({
      handle: (e, s) => {
        handled.push(e.seq)
        signal = s
        entered.open()
        return never() // a handler that ignores its signal
      },
    })
    d.dispatch(exchange('order-1', 0))
    d.dispatch(exchange('order-1', 1))
    await entered.promise
    const graceful = d.stopGracefully()
    d.forceStop()
    expect(d.state).toBe('STOPPED')
    expect(signal?.aborted).toBe(true)
    await expect(graceful).resolves.toBeUndefined()
    await flushTimes(2)
    expect(handled).toEqual([0])
    expect(d.activeGroups).toBe(0)
    expect(d.stats().aggregates[0]).toMatchObject({ dropped: 1, queued: 0, inFlight: 1 })
    d.forceStop() // idempotent
  })

  it('forceStop is safe before prepare and afterwards nothing can start', () => {
    const d = dispatcher()
    d.forceStop()
    expect(d.state).toBe('STOPPED')
    expect(() => d.prepare()).toThrow(/Current state: STOPPED/)
    d.start() // a stopped dispatcher ignores start, as in Wow
    expect(d.state).toBe('STOPPED')
  })

  it('stops an owned supplier after the drain, and never stops a borrowed one', async () => {
    const owned = running()
    owned.dispatch(exchange('order-1', 0))
    await owned.stopGracefully()
    expect(() => owned.schedulerSupplier.getOrInitialize(exchange('x', 0).aggregateId)).toThrow(
      'Aggregate scheduler supplier[recording-dispatcher] has stopped.',
    )

    const calls: string[] = []
    const borrowed: AggregateSchedulerSupplier = {
      getOrInitialize: () => immediateScheduler,
      stopGracefully: async () => void calls.push('graceful'),
      forceStop: () => void calls.push('force'),
    }
    const d = running({ schedulerSupplier: borrowed })
    d.dispatch(exchange('order-1', 0))
    await d.stopGracefully()
    d.forceStop()
    expect(calls).toEqual([])
  })

  it('a supplied scheduler that refuses work (disposed) fails that exchange, as a handler error', async () => {
    const disposed = createParallelScheduler('disposed', 2)
    disposed.dispose()
    const handled: number[] = []
    const d = running({
      schedulerSupplier: {
        getOrInitialize: () => disposed,
        stopGracefully: async () => {},
        forceStop: () => {},
      },
      handle: (e) => void handled.push(e.seq),
    })
    d.dispatch(exchange('order-1', 0))
    await expect(d.stopGracefully()).rejects.toThrow(
      'Scheduler[disposed] is disposed and refuses new work.',
    )
    expect(handled).toEqual([])
    expect(d.stats().aggregates[0]).toMatchObject({ dispatched: 1, failed: 1, inFlight: 0 })
    expect(d.stats().aggregates[0]?.latency.count).toBe(0)
  })

  it('forceStop force-stops an owned supplier', async () => {
    const entered = gate()
    let signal: AbortSignal | undefined
    const d2 = running({
      handle: (_, s) => {
        signal = s
        entered.open()
        return never()
      },
    })
    d2.dispatch(exchange('order-1', 0))
    await entered.promise
    d2.forceStop()
    expect(signal?.aborted).toBe(true)
    expect(() => d2.schedulerSupplier.getOrInitialize(exchange('x', 0).aggregateId)).toThrow(
      /has stopped/,
    )
  })
})

describe('AggregateDispatcher: errors', () => {
  it('a handler error is fatal by default: intake closes, queued exchanges drain, stopGracefully rejects with it', async () => {
    const failure = new Error('handler failed')
    const handled: number[] = []
    const d = running({
      handle: (e) => {
        handled.push(e.seq)
        if (e.seq === 0) throw failure
      },
    })
    d.dispatch(exchange('order-1', 0))
    d.dispatch(exchange('order-1', 1))
    await expect(d.terminated).rejects.toBe(failure)
    expect(handled).toEqual([0, 1])
    expect(d.state).toBe('STOPPED')
    expect(d.dispatch(exchange('order-1', 2))).toBe(false)
    await expect(d.stopGracefully()).rejects.toBe(failure)
  })

  it('a fatal error in one dispatcher leaves another dispatcher on the same supplier running', async () => {
    const supplier = new DefaultAggregateSchedulerSupplier('shared', 1)
    const failure = new Error('fatal')
    const failing = running({
      name: 'failing',
      schedulerSupplier: supplier,
      handle: () => {
        throw failure
      },
    })
    failing.dispatch(exchange('order-1', 0))
    await expect(failing.terminated).rejects.toBe(failure)
    let handled = 0
    const survivor = running({
      name: 'survivor',
      schedulerSupplier: supplier,
      handle: () => void handled++,
    })
    for (let i = 0; i < 20; i++) survivor.dispatch(exchange(`order-${i}`, i))
    await survivor.stopGracefully()
    expect(handled).toBe(20)
    await supplier.stopGracefully()
  })

  it("onError: 'resume' keeps going and reports each error", async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
    const handled: number[] = []
    const d = running({
      onError: 'resume',
      handle: (e) => {
        handled.push(e.seq)
        if (e.seq % 2 === 0) throw new Error(`failed ${e.seq}`)
      },
    })
    for (let i = 0; i < 4; i++) d.dispatch(exchange('order-1', i))
    await d.stopGracefully()
    expect(handled).toEqual([0, 1, 2, 3])
    expect(spy).toHaveBeenCalledTimes(2)
    expect(String(spy.mock.calls[0]?.[0])).toContain('[recording-dispatcher]')
    spy.mockRestore()
  })

  it("an onError function that dispatches a retry into the failed exchange's group keeps the group serial", async () => {
    const log: string[] = []
    let inside = 0
    let peak = 0
    const d = running({
      parallelism: 16,
      schedulerSupplier: new DefaultAggregateSchedulerSupplier('w', 4),
      // The retry is admitted while the group is between two exchanges.
      onError: (_error, e) => void d.dispatch(exchange('order-1', e.seq + 100)),
      handle: async (e) => {
        peak = Math.max(peak, ++inside)
        log.push(`start ${e.seq}`)
        await null
        log.push(`end ${e.seq}`)
        inside--
        if (e.seq === 0) throw new Error('retry me')
      },
    })
    d.dispatch(exchange('order-1', 0))
    d.dispatch(exchange('order-1', 1))
    // Intake stays open until the retry was admitted (stopping refuses it).
    await flushTimes(3)
    await d.stopGracefully()
    expect(peak).toBe(1)
    expect(log).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 100', 'end 100'])
    expect(d.stats().aggregates[0]).toMatchObject({ dispatched: 3, completed: 2, failed: 1 })
  })

  it('onError as a function receives every error and the exchange; if it throws, that is fatal', async () => {
    const seen: Array<[string, number]> = []
    const d = running({
      onError: (error, e) => void seen.push([(error as Error).message, e.seq]),
      handle: (e) => {
        if (e.seq < 2) throw new Error(`failed ${e.seq}`)
      },
    })
    for (let i = 0; i < 3; i++) d.dispatch(exchange('order-1', i))
    await d.stopGracefully()
    expect(seen).toEqual([
      ['failed 0', 0],
      ['failed 1', 1],
    ])

    const escalated = new Error('escalated')
    const d2 = running({
      onError: () => {
        throw escalated
      },
      handle: () => {
        throw new Error('first')
      },
    })
    d2.dispatch(exchange('order-1', 0))
    await expect(d2.stopGracefully()).rejects.toBe(escalated)
  })

  it('a toGroupKey failure is fatal and rethrown to the dispatch caller', async () => {
    const d = running()
    const bad = { aggregateId: { contextName: 'sales', aggregateName: 'Order', id: 42 } }
    expect(() => d.dispatch(bad as never)).toThrow(TypeError)
    await expect(d.terminated).rejects.toBeInstanceOf(TypeError)
  })

  it('a source that throws is fatal', async () => {
    const failure = new Error('source broke')
    // biome-ignore lint/correctness/useYield: the source fails before yielding anything
    async function* broken(): AsyncGenerator<TestExchange> {
      throw failure
    }
    const d = running({ source: broken() })
    await expect(d.terminated).rejects.toBe(failure)
  })
})
