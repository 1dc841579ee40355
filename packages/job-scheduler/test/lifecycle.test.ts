import { IllegalStateError } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import { createLifecycle, type LifecycleComponent, type LifecycleTimers } from '../src/index.js'
import { flush, gate, never } from './helpers.js'

function component(
  name: string,
  calls: string[],
  hooks: {
    prepare?: () => void | PromiseLike<void>
    stop?: () => PromiseLike<void>
    force?: () => void
    quiesce?: () => void
  } = {},
): LifecycleComponent {
  return {
    name,
    prepare() {
      calls.push(`prepare:${name}`)
      return hooks.prepare?.()
    },
    start: () => void calls.push(`start:${name}`),
    quiesce() {
      calls.push(`quiesce:${name}`)
      hooks.quiesce?.()
    },
    stopGracefully() {
      calls.push(`stop:${name}`)
      return hooks.stop?.() ?? Promise.resolve()
    },
    forceStop() {
      calls.push(`force:${name}`)
      hooks.force?.()
    },
  }
}

/** Timers the test fires by hand: the deadline passes when the test says so. */
function manualTimers(): LifecycleTimers & { fire(): void; pending: number } {
  const callbacks = new Map<number, () => void>()
  let next = 0
  return {
    setTimeout(callback) {
      callbacks.set(++next, callback)
      return next
    },
    clearTimeout(handle) {
      callbacks.delete(handle as number)
    },
    fire() {
      const all = [...callbacks.values()]
      callbacks.clear()
      for (const callback of all) callback()
    },
    get pending() {
      return callbacks.size
    },
  }
}

describe('createLifecycle', () => {
  it('prepares and starts in registration order, quiesces in order, stops in reverse', async () => {
    const calls: string[] = []
    const timers = manualTimers()
    const lifecycle = createLifecycle([component('first', calls), component('second', calls)], {
      shutdownTimeout: 1_000,
      timers,
    })
    await lifecycle.start()
    expect(lifecycle.state).toBe('RUNNING')
    await expect(lifecycle.stop()).resolves.toEqual({ outcome: 'graceful' })
    expect(calls).toEqual([
      'prepare:first',
      'prepare:second',
      'start:first',
      'start:second',
      'quiesce:first',
      'quiesce:second',
      'stop:second',
      'stop:first',
    ])
    expect(timers.pending).toBe(0)
    expect(lifecycle.state).toBe('STOPPED')
  })

  it('stops one at a time: the next stop waits for the previous one', async () => {
    const calls: string[] = []
    const second = gate()
    const lifecycle = createLifecycle(
      [component('first', calls), component('second', calls, { stop: () => second.promise })],
      { shutdownTimeout: 1_000, timers: manualTimers() },
    )
    await lifecycle.start()
    const stopped = lifecycle.stop()
    expect(lifecycle.stop()).toBe(stopped)
    await flush()
    expect(calls.at(-1)).toBe('stop:second')
    second.open()
    await stopped
    expect(calls.at(-1)).toBe('stop:first')
  })

  it('past the one global deadline, forceStop runs on every component in reverse', async () => {
    const calls: string[] = []
    const timers = manualTimers()
    const lifecycle = createLifecycle(
      [component('first', calls), component('second', calls, { stop: never })],
      { shutdownTimeout: 50, timers },
    )
    await lifecycle.start()
    calls.length = 0
    const stopped = lifecycle.stop()
    await flush()
    timers.fire()
    await expect(stopped).resolves.toEqual({ outcome: 'forced' })
    expect(calls).toEqual([
      'quiesce:first',
      'quiesce:second',
      'stop:second',
      'force:second',
      'force:first',
    ])
  })

  it('uses real timers by default (small deadline)', async () => {
    const calls: string[] = []
    const lifecycle = createLifecycle([component('hung', calls, { stop: never })], {
      shutdownTimeout: 5,
    })
    await lifecycle.start()
    await expect(lifecycle.stop()).resolves.toEqual({ outcome: 'forced' })
    expect(calls).toContain('force:hung')
  })

  it('forceStop is prompt, idempotent and safe before start', async () => {
    const calls: string[] = []
    const lifecycle = createLifecycle([component('first', calls), component('second', calls)], {
      shutdownTimeout: 1_000,
    })
    lifecycle.forceStop()
    lifecycle.forceStop()
    expect(calls).toEqual(['force:second', 'force:first'])
    expect(lifecycle.state).toBe('STOPPED')
    await expect(lifecycle.stop()).resolves.toEqual({ outcome: 'forced' })
    expect(() => lifecycle.start()).toThrow(IllegalStateError)
  })

  it('forceStop during a graceful stop resolves it at once as forced', async () => {
    const calls: string[] = []
    const lifecycle = createLifecycle([component('hung', calls, { stop: never })], {
      shutdownTimeout: 60_000,
      timers: manualTimers(),
    })
    await lifecycle.start()
    const stopped = lifecycle.stop()
    await flush()
    lifecycle.forceStop()
    await expect(stopped).resolves.toEqual({ outcome: 'forced' })
  })

  it('a prepare failure stops what was attempted, in reverse, and rejects with that failure', async () => {
    const calls: string[] = []
    const failure = new Error('prepare')
    const lifecycle = createLifecycle(
      [
        component('first', calls),
        component('second', calls, {
          prepare: () => {
            throw failure
          },
        }),
        component('third', calls),
      ],
      { shutdownTimeout: 1_000, timers: manualTimers() },
    )
    await expect(lifecycle.start()).rejects.toBe(failure)
    expect(calls).toEqual([
      'prepare:first',
      'prepare:second',
      'quiesce:first',
      'quiesce:second',
      'stop:second',
      'stop:first',
    ])
  })

  it('the first error is primary; later ones are attached', async () => {
    const first = new Error('quiesce failed')
    const second = new Error('stop failed')
    const calls: string[] = []
    const lifecycle = createLifecycle(
      [
        component('a', calls, {
          stop: () => Promise.reject(second),
        }),
        component('b', calls, {
          quiesce: () => {
            throw first
          },
        }),
      ],
      { shutdownTimeout: 1_000, timers: manualTimers() },
    )
    await lifecycle.start()
    const error = await lifecycle.stop().then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(AggregateError)
    expect((error as AggregateError).cause).toBe(first)
    expect((error as AggregateError).errors).toEqual([first, second])
    expect(calls).toContain('stop:a') // a failure does not stop the others from stopping
  })

  it('forceStop throws the first force failure after forcing everyone', () => {
    const calls: string[] = []
    const failure = new Error('force')
    const lifecycle = createLifecycle(
      [
        component('a', calls),
        component('b', calls, {
          force: () => {
            throw failure
          },
        }),
      ],
      { shutdownTimeout: 1_000 },
    )
    expect(() => lifecycle.forceStop()).toThrow(failure)
    expect(calls).toEqual(['force:b', 'force:a'])
  })

  it('rejects bad input early', () => {
    const calls: string[] = []
    const a = component('a', calls)
    expect(() => createLifecycle([a, a], { shutdownTimeout: 1 })).toThrow(/registered twice/)
    expect(() => createLifecycle([a], { shutdownTimeout: -1 })).toThrow(RangeError)
    expect(() => createLifecycle([{ ...a, name: '' }], { shutdownTimeout: 1 })).toThrow(TypeError)
  })
})

describe('createLifecycle: stops racing a start', () => {
  it('a stop during a pending prepare starts nothing, stops what was attempted and rejects the start', async () => {
    const calls: string[] = []
    const preparing = gate()
    const lifecycle = createLifecycle(
      [component('first', calls, { prepare: () => preparing.promise }), component('second', calls)],
      { shutdownTimeout: 1_000, timers: manualTimers() },
    )
    const started = lifecycle.start()
    const stopped = lifecycle.stop()
    preparing.open()
    await expect(started).rejects.toThrow(/stopped during start/)
    await expect(stopped).resolves.toEqual({ outcome: 'graceful' })
    expect(calls).toEqual(['prepare:first', 'quiesce:first', 'stop:first'])
  })

  it('a force stop during a pending prepare forces the late component again', async () => {
    const calls: string[] = []
    const preparing = gate()
    const lifecycle = createLifecycle(
      [component('first', calls, { prepare: () => preparing.promise }), component('second', calls)],
      { shutdownTimeout: 1_000 },
    )
    const started = lifecycle.start()
    lifecycle.forceStop()
    preparing.open()
    await expect(started).rejects.toBeInstanceOf(IllegalStateError)
    expect(calls).toEqual(['prepare:first', 'force:second', 'force:first', 'force:first'])
  })
})
