import { describe, expect, it } from 'vitest'
import { counts, run, shutdown, whenIdle } from '../src/index.js'
import { flush, gate, recordedRuntime } from './helpers.js'

describe('abandonAfter', () => {
  it('releases the slot of a cancelled body that ignores its signal, and reports both ends', async () => {
    const { runtime, clock, events } = recordedRuntime({ concurrency: 1, abandonAfter: 100 })
    const stubborn = gate()
    const task = run(runtime, () => stubborn.promise) // ignores ctx.signal
    const next = run(runtime, () => 'next')
    task.cancel()
    expect(counts(runtime)).toMatchObject({ running: 1, exiting: 1, queued: 1 })
    await clock.advance(99)
    expect(next.state).toBe('queued')
    await clock.advance(1)
    expect(next.state).not.toBe('queued')
    expect(await next).toBe('next')
    expect(counts(runtime)).toEqual({ live: 0, parked: 0, queued: 0, running: 0, exiting: 0 })
    const abandoned = events.filter((e) => e.type === 'task:abandoned')
    expect(abandoned).toEqual([
      { type: 'task:abandoned', taskId: task.id, seq: expect.any(Number), at: 100 },
    ])
    await whenIdle(runtime) // idle although the abandoned body still runs
    stubborn.fail(new Error('late'))
    await flush()
    const exited = events.filter((e) => e.type === 'task:exited')
    expect(exited).toMatchObject([{ taskId: task.id, abandoned: true, threw: new Error('late') }])
    // Its exit released nothing twice: a new task still gets the one slot only.
    const a = gate()
    const first = run(runtime, () => a.promise)
    const second = run(runtime, () => 2)
    expect([first.state, second.state]).toEqual(['running', 'queued'])
    a.open()
    await Promise.all([first, second])
  })

  it('a body that exits in time is not abandoned', async () => {
    const { runtime, clock, events } = recordedRuntime({ concurrency: 1, abandonAfter: 100 })
    const slow = gate()
    const task = run(runtime, () => slow.promise)
    task.cancel()
    await clock.advance(50)
    slow.open()
    await flush()
    await clock.advance(100)
    expect(events.some((e) => e.type === 'task:abandoned')).toBe(false)
    expect(events.filter((e) => e.type === 'task:exited')).toMatchObject([{ taskId: task.id }])
    expect(events.find((e) => e.type === 'task:exited')).not.toHaveProperty('abandoned')
  })

  it('a timed-out attempt that ignores its signal holds back its retry until it is abandoned', async () => {
    const { runtime, clock, events } = recordedRuntime({ concurrency: 2, abandonAfter: 30 })
    const stuck = gate()
    let calls = 0
    const task = run(
      runtime,
      () => {
        calls++
        return calls === 1 ? stuck.promise.then(() => 'first') : 'second'
      },
      { timeout: 20, retry: { attempts: 2, delay: 0 } },
    )
    await clock.advance(20)
    // Two attempts of one task never overlap: the retry waits for the timed-out body.
    expect([task.state, calls]).toEqual(['parked:retry', 1])
    expect(counts(runtime)).toMatchObject({ running: 1, exiting: 0 })
    await clock.advance(30)
    expect(await task).toBe('second')
    expect(counts(runtime)).toMatchObject({ running: 0, exiting: 0 })
    expect(events.filter((e) => e.type === 'task:abandoned')).toHaveLength(1)
    stuck.open()
    await flush()
    expect(events.filter((e) => e.type === 'task:exited')).toMatchObject([{ abandoned: true }])
  })

  it("counts in shutdown's report: a drain does not wait for an abandoned body", async () => {
    const { runtime, clock } = recordedRuntime({ abandonAfter: 10 })
    const never = gate()
    const task = run(runtime, () => never.promise)
    task.cancel()
    const report = shutdown(runtime)
    await clock.advance(10)
    expect(await report).toMatchObject({ abandoned: 1, cancelled: 0 })
    never.open()
  })

  it('default Infinity keeps slots honest', async () => {
    const { runtime, clock } = recordedRuntime({ concurrency: 1 })
    const stubborn = gate()
    const task = run(runtime, () => stubborn.promise)
    task.cancel()
    const next = run(runtime, () => 1)
    await clock.advance(1_000_000)
    expect(next.state).toBe('queued')
    stubborn.open()
    expect(await next).toBe(1)
  })
})
