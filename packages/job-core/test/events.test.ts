import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  createRuntime,
  createTestClock,
  getEventBus,
  inspect,
  run,
  subscribe,
} from '../src/index.js'
import { recordedRuntime } from './helpers.js'

declare module '../src/index.js' {
  interface RuntimeEventMap {
    'test:ping': { n: number }
  }
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe('the event bus', () => {
  it('delivers every event synchronously with seq from 1 without gaps and the clock time in at', async () => {
    const clock = createTestClock({ now: 1_000 })
    const runtime = createRuntime({ clock })
    const seen: Array<{ seq: number; at: number; type: string }> = []
    subscribe(runtime, (e) => seen.push({ seq: e.seq, at: e.at, type: e.type }))
    const task = run(runtime, (ctx) => ctx.sleep(5).then(() => 1), { label: 'job' })
    expect(seen.map((e) => e.type)).toEqual(['task:created', 'task:transition', 'task:transition'])
    await clock.advance(5)
    await task
    expect(seen.map((e) => e.seq)).toEqual([1, 2, 3, 4])
    expect(seen.map((e) => e.at)).toEqual([1_000, 1_000, 1_000, 1_005])
  })

  it('task events carry the fields of core.md §8', async () => {
    const { runtime, events } = recordedRuntime()
    const task = run(runtime, () => Promise.reject(new Error('no')), { label: 'l' })
    await task.then(undefined, () => {})
    expect(events[0]).toMatchObject({ type: 'task:created', taskId: task.id, label: 'l' })
    expect(events.at(-1)).toMatchObject({
      type: 'task:transition',
      taskId: task.id,
      from: 'running',
      to: 'error',
      attempt: 1,
      error: new Error('no'),
    })
  })

  it('a listener that throws does not break the runtime or other listeners, and is reported', async () => {
    // The bad listener also throws on its own error report; that one goes to the console.
    const consoleErrors = vi.spyOn(console, 'error').mockImplementation(() => {})
    const runtime = createRuntime()
    const received: string[] = []
    subscribe(runtime, () => {
      throw new Error('bad listener')
    })
    subscribe(runtime, (e) => received.push(e.type))
    const value = await run(runtime, () => 5)
    expect(value).toBe(5)
    expect(received).toContain('runtime:listener-error')
    expect(received.filter((t) => t === 'task:transition')).toHaveLength(3)
    expect(consoleErrors).toHaveBeenCalled()
  })

  it('a lone throwing listener is reported to console.error, not rethrown', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    const runtime = createRuntime()
    subscribe(runtime, () => {
      throw new Error('alone')
    })
    expect(await run(runtime, () => 1)).toBe(1)
    expect(errors).toHaveBeenCalled()
  })

  it('builds no events and stamps no seq without listeners', () => {
    const runtime = createRuntime()
    run(runtime, () => 1)
    expect(inspect(runtime).lastSeq).toBe(0)
    const off = subscribe(runtime, () => {})
    run(runtime, () => 1)
    expect(inspect(runtime).lastSeq).toBe(4)
    off()
    off()
    expect(inspect(runtime).sizes.listeners).toBe(0)
  })

  it('emit() stamps custom and augmented events on the same bus', () => {
    const { runtime, events } = recordedRuntime()
    getEventBus(runtime).emit({ type: 'test:ping', n: 1 })
    getEventBus(runtime).emit({ type: 'app:anything', detail: 'x' })
    expect(events).toEqual([
      { type: 'test:ping', n: 1, seq: 1, at: 0 },
      { type: 'app:anything', detail: 'x', seq: 2, at: 0 },
    ])
  })

  it('unsubscribing during delivery neither skips nor repeats listeners for that event', () => {
    const runtime = createRuntime()
    const calls: string[] = []
    let offB: () => void = () => {}
    subscribe(runtime, () => {
      calls.push('a')
      offB()
    })
    offB = subscribe(runtime, () => calls.push('b'))
    getEventBus(runtime).emit({ type: 'x:y' })
    getEventBus(runtime).emit({ type: 'x:y' })
    expect(calls).toEqual(['a', 'b', 'a'])
  })

  it('subscribing during delivery neither delivers that event to the newcomer nor skips it later', () => {
    const runtime = createRuntime()
    const calls: string[] = []
    let subscribed = false
    subscribe(runtime, (e) => {
      calls.push(`a${e.seq}`)
      if (subscribed) return
      subscribed = true
      subscribe(runtime, (later) => calls.push(`c${later.seq}`))
    })
    getEventBus(runtime).emit({ type: 'x:y' })
    getEventBus(runtime).emit({ type: 'x:y' })
    expect(calls).toEqual(['a1', 'a2', 'c2'])
  })

  it('at never decreases along seq, and each event of a task is stamped when it happens', async () => {
    // A clock that moves on every reading: any event stamped from an older
    // reading than the event before it would show here.
    let ms = 0
    const clock = {
      now: () => ++ms,
      setTimeout: (callback: () => void, delay: number) => setTimeout(callback, delay),
      clearTimeout: (handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    }
    const runtime = createRuntime({ clock, concurrency: 1 })
    const events: Array<{ seq: number; at: number; type: string }> = []
    subscribe(runtime, (e) => {
      events.push({ seq: e.seq, at: e.at, type: e.type })
      // A diagnostic emitted from inside a delivery is stamped in between.
      if (e.type === 'task:created' && e.taskId === 2) {
        getEventBus(runtime).emit({ type: 'test:ping', n: 2 })
      }
    })
    const first = run(runtime, () => new Promise<void>((resolve) => setTimeout(resolve, 1)))
    const second = run(runtime, () => 2)
    second.cancel()
    const third = run(runtime, () => 3)
    await first
    expect(await third).toBe(3)
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1))
    for (let i = 1; i < events.length; i++) {
      expect(events[i]!.at, `${events[i]!.type} #${events[i]!.seq}`).toBeGreaterThanOrEqual(
        events[i - 1]!.at,
      )
    }
    // The ping is stamped after task 2's creation, and task 2's first transition after the ping.
    const ping = events.findIndex((e) => e.type === 'test:ping')
    expect(events[ping - 1]!.type).toBe('task:created')
    expect(events[ping]!.at).toBeGreaterThan(events[ping - 1]!.at)
    expect(events[ping + 1]!.at).toBeGreaterThan(events[ping]!.at)
  })
})

describe('the runtime inspector', () => {
  it('is reachable by Symbol.for without importing core, and reports lib, time, tasks and events', async () => {
    const { createTestClock, getRuntimeInspector, RUNTIME_INSPECTOR_KEY, VERSION } = await import(
      '../src/index.js'
    )
    const clock = createTestClock({ now: 50 })
    const runtime = createRuntime({ clock, name: 'inspected' })
    const bySymbol = (runtime as unknown as Record<symbol, ReturnType<typeof getRuntimeInspector>>)[
      Symbol.for(RUNTIME_INSPECTOR_KEY)
    ]!
    const seen: string[] = []
    bySymbol.subscribe((e) => seen.push(e.type))
    run(runtime, (ctx) => ctx.sleep(10))
    expect(bySymbol.lib).toBe(`@vega/job-core@${VERSION}`)
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+/)
    expect(bySymbol.name).toBe('inspected')
    expect(bySymbol.now()).toBe(50)
    expect(bySymbol.inspect().tasks).toHaveLength(1)
    expect(seen).toEqual(['task:created', 'task:transition', 'task:transition'])
    expect(Object.keys(runtime)).not.toContain(Symbol.for(RUNTIME_INSPECTOR_KEY).toString())
  })
})
