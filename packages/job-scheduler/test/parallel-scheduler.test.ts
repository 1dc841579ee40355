import { createHook } from 'node:async_hooks'
import { IllegalStateError } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import { createParallelScheduler, immediateScheduler } from '../src/index.js'
import { flush, gate, never } from './helpers.js'

describe('createParallelScheduler', () => {
  it('exposes its name and parallelism', () => {
    const scheduler = createParallelScheduler('worker-Order', 3)
    expect(scheduler.name).toBe('worker-Order')
    expect(scheduler.parallelism).toBe(3)
    expect(scheduler.isDisposed).toBe(false)
  })

  it('rejects parallelism <= 0 or non-integer with a RangeError, and an empty name with a TypeError', () => {
    for (const bad of [0, -2, 2.5, Number.NaN]) {
      expect(() => createParallelScheduler('s', bad)).toThrow(RangeError)
    }
    expect(() => createParallelScheduler('', 1)).toThrow(TypeError)
    expect(() => createParallelScheduler('s', 1).schedule(42 as never)).toThrow(TypeError)
  })

  it('never runs work inside schedule()', async () => {
    const scheduler = createParallelScheduler('s', 1)
    const log: string[] = []
    const done = scheduler.schedule(() => log.push('work'))
    log.push('after schedule')
    await done
    expect(log).toEqual(['after schedule', 'work'])
  })

  it('starts work without queueMicrotask, so it makes no AsyncResource of its own (Node gives each a callback property, which grows every later AsyncResource, such as the context carrier job-core keeps per waiting task)', async () => {
    const types: string[] = []
    const hook = createHook({
      init(_id, type) {
        types.push(type)
      },
    })
    const scheduler = createParallelScheduler('s', 2)
    hook.enable()
    try {
      const log: number[] = []
      await Promise.all([1, 2, 3].map((i) => scheduler.schedule(() => log.push(i))))
      expect(log).toEqual([1, 2, 3])
    } finally {
      hook.disable()
    }
    expect(types).not.toContain('Microtask')
    expect(types.length).toBeGreaterThan(0)
  })

  it('runs at most parallelism pieces of work at once, first come first served', async () => {
    const scheduler = createParallelScheduler('s', 2)
    const gates = [gate(), gate(), gate(), gate()]
    const started: number[] = []
    const results = gates.map((g, i) =>
      scheduler.schedule(async () => {
        started.push(i)
        await g.promise
        return i
      }),
    )
    await flush()
    expect(started).toEqual([0, 1])
    expect(scheduler.running).toBe(2)
    expect(scheduler.queued).toBe(2)
    gates[1]!.open()
    await flush()
    expect(started).toEqual([0, 1, 2])
    for (const g of gates) g.open()
    expect(await Promise.all(results)).toEqual([0, 1, 2, 3])
    expect(scheduler.running).toBe(0)
  })

  it('settles with the work value or error, synchronous or not', async () => {
    const scheduler = createParallelScheduler('s', 1)
    const failure = new Error('boom')
    await expect(scheduler.schedule(() => 7)).resolves.toBe(7)
    await expect(
      scheduler.schedule(() => {
        throw failure
      }),
    ).rejects.toBe(failure)
    await expect(scheduler.schedule(() => Promise.reject(failure))).rejects.toBe(failure)
    // A failure frees its lane.
    await expect(scheduler.schedule(async () => 'next')).resolves.toBe('next')
  })

  it('disposeGracefully refuses new work, lets queued and running work finish, and resolves when idle', async () => {
    const scheduler = createParallelScheduler('s', 1)
    const first = gate()
    const log: string[] = []
    const a = scheduler.schedule(async () => {
      await first.promise
      log.push('a')
    })
    const b = scheduler.schedule(() => {
      log.push('b')
    })
    await flush()
    const idle = scheduler.disposeGracefully()
    expect(scheduler.disposeGracefully()).toBe(idle)
    expect(scheduler.isDisposed).toBe(true)
    await expect(scheduler.schedule(() => 1)).rejects.toBeInstanceOf(IllegalStateError)
    let resolved = false
    void idle.then(() => {
      resolved = true
    })
    await flush()
    expect(resolved).toBe(false)
    first.open()
    await Promise.all([a, b, idle])
    expect(log).toEqual(['a', 'b'])
  })

  it('dispose rejects queued work, aborts running work and returns at once', async () => {
    const scheduler = createParallelScheduler('worker', 1)
    let seen: AbortSignal | undefined
    const running = scheduler.schedule((signal) => {
      seen = signal
      return never()
    })
    const queued = scheduler.schedule(() => 'never runs')
    await flush()
    scheduler.dispose()
    expect(seen?.aborted).toBe(true)
    expect((seen!.reason as DOMException).name).toBe('AbortError')
    await expect(queued).rejects.toThrow('Scheduler[worker] was disposed before this work started.')
    await expect(scheduler.schedule(() => 1)).rejects.toThrow(/Scheduler\[worker\] is disposed/)
    scheduler.dispose() // harmless twice
    expect(scheduler.isDisposed).toBe(true)
    void running
  })

  it('dispose takes over a graceful disposal whose work never settles', async () => {
    const scheduler = createParallelScheduler('s', 1)
    void scheduler.schedule(() => never())
    await flush()
    const idle = scheduler.disposeGracefully()
    scheduler.dispose()
    await expect(idle).resolves.toBeUndefined()
  })
})

describe('immediateScheduler', () => {
  it('runs work at once inside schedule()', async () => {
    const log: string[] = []
    const result = immediateScheduler.schedule(() => {
      log.push('work')
      return 1
    })
    log.push('after')
    expect(log).toEqual(['work', 'after'])
    await expect(result).resolves.toBe(1)
  })

  it('turns a synchronous throw into a rejection and is never disposed', async () => {
    const failure = new Error('x')
    await expect(
      immediateScheduler.schedule(() => {
        throw failure
      }),
    ).rejects.toBe(failure)
    immediateScheduler.dispose()
    await immediateScheduler.disposeGracefully()
    expect(immediateScheduler.isDisposed).toBe(false)
    await expect(immediateScheduler.schedule(() => 2)).resolves.toBe(2)
  })
})
