import { IllegalStateError } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import {
  AggregateDispatcher,
  type AggregateSchedulerSupplier,
  BorrowedAggregateSchedulerSupplier,
  CompositeDispatcher,
  DefaultAggregateSchedulerSupplier,
  immediateScheduler,
  type LifecycleComponent,
} from '../src/index.js'
import { exchange, flush, gate, never, type TestExchange } from './helpers.js'

interface RecordingSupplier extends AggregateSchedulerSupplier {
  graceful: number
  forced: number
}

function recordingSupplier(calls: string[]): RecordingSupplier {
  return {
    graceful: 0,
    forced: 0,
    getOrInitialize: () => immediateScheduler,
    stopGracefully() {
      this.graceful++
      calls.push('stop:scheduler')
      return Promise.resolve()
    },
    forceStop() {
      this.forced++
      calls.push('force:scheduler')
    },
  }
}

function child(
  name: string,
  calls: string[],
  hooks: { prepare?: () => unknown; stop?: () => PromiseLike<void> } = {},
): LifecycleComponent {
  return {
    name,
    prepare() {
      calls.push(`prepare:${name}`)
      hooks.prepare?.()
    },
    start: () => void calls.push(`start:${name}`),
    quiesce: () => void calls.push(`quiesce:${name}`),
    stopGracefully() {
      calls.push(`stop:${name}`)
      return hooks.stop?.() ?? Promise.resolve()
    },
    forceStop: () => void calls.push(`force:${name}`),
  }
}

describe('CompositeDispatcher', () => {
  it('hands every child a borrowed supplier and prepares all children before starting any', async () => {
    const calls: string[] = []
    const supplier = recordingSupplier(calls)
    const given: AggregateSchedulerSupplier[] = []
    const composite = new CompositeDispatcher({
      name: 'recording-composite',
      schedulerSupplier: supplier,
      children: (s) => {
        given.push(s)
        return [child('domain', calls), child('state', calls)]
      },
    })
    await composite.prepare()
    composite.start()
    expect(calls).toEqual(['prepare:domain', 'prepare:state', 'start:domain', 'start:state'])
    expect(given[0]).toBeInstanceOf(BorrowedAggregateSchedulerSupplier)
    await composite.stopGracefully()
  })

  it('graceful stop quiesces every child, stops children in reverse, then the supplier exactly once, last', async () => {
    const calls: string[] = []
    const supplier = recordingSupplier(calls)
    const composite = new CompositeDispatcher({
      name: 'c',
      schedulerSupplier: supplier,
      children: () => [child('domain', calls), child('state', calls)],
    })
    await composite.prepare()
    composite.start()
    calls.length = 0
    const stop = composite.stopGracefully()
    expect(composite.stopGracefully()).toBe(stop)
    await stop
    expect(calls).toEqual([
      'quiesce:domain',
      'quiesce:state',
      'stop:state',
      'stop:domain',
      'stop:scheduler',
    ])
    expect(supplier.graceful).toBe(1)
    expect(composite.state).toBe('STOPPED')
  })

  it('children stopping their borrowed supplier never stop the real one', async () => {
    const real = new DefaultAggregateSchedulerSupplier('shared', 1)
    const handled: string[] = []
    const composite = new CompositeDispatcher({
      name: 'c',
      schedulerSupplier: real,
      children: (s) =>
        ['first', 'second'].map(
          (name) =>
            new AggregateDispatcher<TestExchange>({
              name,
              schedulerSupplier: s,
              parallelism: 4,
              handle: (e) => void handled.push(`${name}:${e.seq}`),
            }),
        ),
    })
    await composite.prepare()
    composite.start()
    const [first, second] = composite.children as AggregateDispatcher<TestExchange>[]
    first!.dispatch(exchange('order-1', 1))
    second!.dispatch(exchange('order-1', 2))
    await first!.stopGracefully()
    expect(real.isStopped).toBe(false)
    await composite.stopGracefully()
    expect(real.isStopped).toBe(true)
    expect(handled.sort()).toEqual(['first:1', 'second:2'])
  })

  it('force stop runs children in reverse then the supplier, without waiting for anything', async () => {
    const calls: string[] = []
    const supplier = recordingSupplier(calls)
    const composite = new CompositeDispatcher({
      name: 'c',
      schedulerSupplier: supplier,
      children: () => [child('domain', calls), child('state', calls, { stop: never })],
    })
    await composite.prepare()
    composite.start()
    calls.length = 0
    composite.forceStop()
    composite.forceStop()
    expect(calls).toEqual(['force:state', 'force:domain', 'force:scheduler'])
    expect(supplier.forced).toBe(1)
  })

  it('a force stop after the graceful stop entered a child skips the graceful supplier step', async () => {
    const calls: string[] = []
    const supplier = recordingSupplier(calls)
    const stopGate = gate()
    const composite = new CompositeDispatcher({
      name: 'c',
      schedulerSupplier: supplier,
      children: () => [
        child('domain', calls),
        child('state', calls, { stop: () => stopGate.promise }),
      ],
    })
    await composite.prepare()
    composite.start()
    const graceful = composite.stopGracefully()
    await flush()
    expect(calls).toContain('stop:state')
    composite.forceStop()
    await expect(graceful).resolves.toBeUndefined() // resolves at once, the child's stop still pending
    stopGate.open()
    await flush()
    expect(calls).not.toContain('stop:domain')
    expect(supplier.graceful).toBe(0)
    expect(supplier.forced).toBe(1)
  })

  it('a force stop before the graceful stop began skips the graceful supplier step', async () => {
    const calls: string[] = []
    const supplier = recordingSupplier(calls)
    const composite = new CompositeDispatcher({
      name: 'c',
      schedulerSupplier: supplier,
      children: () => [child('domain', calls)],
    })
    await composite.prepare()
    composite.forceStop()
    await composite.stopGracefully()
    expect(supplier.graceful).toBe(0)
    expect(supplier.forced).toBe(1)
  })

  it('builds every child before preparing any: a construction failure subscribes nothing (graceful path)', async () => {
    const calls: string[] = []
    const supplier = recordingSupplier(calls)
    const failure = new Error('state-dispatcher-construction')
    const composite = new CompositeDispatcher({
      name: 'c',
      schedulerSupplier: supplier,
      children: () => {
        child('domain', calls)
        throw failure
      },
    })
    expect(() => composite.prepare()).toThrow(failure)
    expect(calls).toEqual([])
    await composite.stopGracefully()
    expect(supplier.graceful).toBe(1)
    expect(supplier.forced).toBe(0)
  })

  it('builds every child before preparing any: a construction failure subscribes nothing (force path)', () => {
    const calls: string[] = []
    const supplier = recordingSupplier(calls)
    const composite = new CompositeDispatcher({
      name: 'c',
      schedulerSupplier: supplier,
      children: () => {
        throw new Error('construction')
      },
    })
    expect(() => composite.prepare()).toThrow('construction')
    composite.forceStop()
    expect(calls).toEqual(['force:scheduler'])
    expect(supplier.forced).toBe(1)
  })

  it('a child prepare failure stops only the attempted children, in reverse, and rethrows it', async () => {
    const calls: string[] = []
    const failure = new Error('child-prepare')
    const composite = new CompositeDispatcher({
      name: 'multi-parent',
      schedulerSupplier: recordingSupplier(calls),
      children: () => [
        child('first', calls),
        child('second', calls, {
          prepare: () => {
            throw failure
          },
        }),
        child('third', calls),
      ],
    })
    await expect(composite.prepare()).rejects.toBe(failure)
    expect(calls).toEqual(['prepare:first', 'prepare:second', 'stop:second', 'stop:first'])
  })

  it('lifecycle misuse throws IllegalStateError naming the dispatcher and state', async () => {
    const composite = new CompositeDispatcher({
      name: 'c',
      schedulerSupplier: recordingSupplier([]),
      children: () => [],
    })
    expect(() => composite.start()).toThrow(IllegalStateError)
    expect(() => composite.start()).toThrow('[c] Dispatcher cannot start from state: NEW')
    await composite.prepare()
    expect(() => composite.prepare()).toThrow(
      '[c] Dispatcher can only be prepared once. Current state: PREPARED.',
    )
    composite.forceStop()
  })

  it('rejects bad options early', () => {
    expect(
      () =>
        new CompositeDispatcher({ name: 'c', schedulerSupplier: {} as never, children: () => [] }),
    ).toThrow(TypeError)
    expect(
      () =>
        new CompositeDispatcher({
          name: '',
          schedulerSupplier: recordingSupplier([]),
          children: () => [],
        }),
    ).toThrow(TypeError)
  })
})
