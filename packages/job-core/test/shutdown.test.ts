import { describe, expect, it } from 'vitest'
import {
  cancelQueued,
  createRuntime,
  IllegalStateError,
  inspect,
  isPaused,
  pause,
  type RuntimeEvent,
  resume,
  run,
  setConcurrency,
  settle,
  shutdown,
} from '../src/index.js'
import { flush, gate, recordedRuntime } from './helpers.js'

const phases = (events: RuntimeEvent[]) =>
  events.flatMap((e) => (e.type === 'runtime:shutdown' ? [e.phase] : []))

describe('shutdown', () => {
  it('drain: queued work runs to the end, later run() calls are cancelled with shutdown', async () => {
    const { runtime, clock, events } = recordedRuntime({ concurrency: 1 })
    const a = run(runtime, (ctx) => ctx.sleep(10).then(() => 'a'))
    const b = run(runtime, (ctx) => ctx.sleep(10).then(() => 'b'))
    const done = shutdown(runtime)
    const late = run(runtime, () => 'late')
    expect(late.state).toBe('cancelled')
    expect(late.cancelReason).toBe('shutdown')
    await expect(late).rejects.toMatchObject({ reason: 'shutdown' })
    await clock.advance(10)
    await clock.advance(10)
    const report = await done
    expect([await a, await b]).toEqual(['a', 'b'])
    expect(report).toEqual({ mode: 'drain', completed: 2, cancelled: 1, abandoned: 0, errors: [] })
    expect(phases(events)).toEqual(['started', 'finished'])
    expect(inspect(runtime).closed).toBe(true)
  })

  it('cancel: parked and queued tasks are cancelled and running bodies aborted', async () => {
    const { runtime, events } = recordedRuntime({ concurrency: 1 })
    const running = run(runtime, (ctx) => ctx.sleep(1_000))
    const queued = run(runtime, () => 'q')
    const report = await shutdown(runtime, { mode: 'cancel' })
    expect([running.cancelReason, queued.cancelReason]).toEqual(['shutdown', 'shutdown'])
    expect(report).toMatchObject({ mode: 'cancel', completed: 0, cancelled: 2, abandoned: 0 })
    expect(phases(events)).toEqual(['started', 'finished'])
  })

  it('a drain escalates to cancel at the deadline and reports bodies that ignore their signal', async () => {
    const { runtime, clock, events } = recordedRuntime()
    const stubborn = gate()
    const task = run(runtime, () => stubborn.promise)
    const polite = run(runtime, (ctx) => ctx.sleep(60_000))
    const done = shutdown(runtime, { mode: 'drain', deadline: 100 })
    await clock.advance(100)
    const report = await done
    expect(report).toEqual({ mode: 'cancel', completed: 0, cancelled: 2, abandoned: 1, errors: [] })
    expect(phases(events)).toEqual(['started', 'escalated', 'finished'])
    expect(task.cancelReason).toBe('shutdown')
    expect(polite.cancelReason).toBe('shutdown')
    stubborn.open()
    await flush()
    expect(inspect(runtime).sizes.runningBodies).toBe(0)
  })

  it('is memoised, and a cancel call takes over a drain in progress', async () => {
    const { runtime, clock, events } = recordedRuntime()
    const task = run(runtime, (ctx) => ctx.sleep(60_000))
    const drain = shutdown(runtime)
    expect(shutdown(runtime)).toBe(drain)
    await clock.advance(5)
    expect(task.state).toBe('running')
    const takeover = shutdown(runtime, { mode: 'cancel' })
    expect(takeover).toBe(drain)
    expect(task.cancelReason).toBe('shutdown')
    const report = await drain
    expect(report.mode).toBe('cancel')
    expect(phases(events)).toEqual(['started', 'escalated', 'finished'])
  })

  it('collects plugin dispose errors without skipping the other disposers', async () => {
    const disposed: string[] = []
    const { runtime } = recordedRuntime({
      plugins: [
        { name: 'ok', install: () => () => void disposed.push('ok') },
        {
          name: 'bad',
          install: () => () => {
            throw new Error('dispose failed')
          },
        },
      ],
    })
    const report = await shutdown(runtime)
    expect(disposed).toEqual(['ok'])
    expect(report.errors).toEqual([new Error('dispose failed')])
  })
})

describe('plugins hear of shutdown', () => {
  it('onShutdown listeners get the mode at the start and again on escalation, before tasks are cancelled', async () => {
    const heard: string[] = []
    const { runtime, clock } = recordedRuntime({
      plugins: [
        {
          name: 'listener',
          install(host) {
            host.onShutdown((mode) => {
              heard.push(`${mode}:${[...host.liveTasks()].map((t) => t.state).join(',')}`)
            })
            host.onShutdown(() => {
              throw new Error('listener failed')
            })
          },
        },
      ],
    })
    run(runtime, (ctx) => ctx.sleep(1_000))
    const done = shutdown(runtime, { deadline: 10 })
    await clock.advance(10)
    const report = await done
    expect(heard).toEqual(['drain:running', 'cancel:running'])
    expect(report.errors).toEqual([new Error('listener failed'), new Error('listener failed')])
  })
})

describe('control calls once shutdown() has begun', () => {
  it('pause() during a drain is refused, and the drain still finishes (regression: it used to hang)', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const hold = gate()
    const first = run(runtime, () => hold.promise)
    const second = run(runtime, async () => 'second ran')
    const report = shutdown(runtime, { mode: 'drain' })
    expect(() => pause(runtime)).toThrow(IllegalStateError)
    expect(() => pause(runtime)).toThrow(
      /is shutting down; a shutdown runs or cancels the remaining work and cannot be paused/,
    )
    expect(isPaused(runtime)).toBe(false)
    resume(runtime)
    setConcurrency(runtime, 2)
    expect(second.state).toBe('running')
    hold.open()
    await first
    expect(await second).toBe('second ran')
    expect(await report).toMatchObject({ completed: 2, cancelled: 0 })
  })

  it('after the shutdown finished: pause and setConcurrency throw, run() says why its task was cancelled', async () => {
    const runtime = createRuntime({ name: 'closed' })
    await shutdown(runtime)
    expect(() => pause(runtime)).toThrow(/runtime closed has shut down/)
    expect(() => setConcurrency(runtime, 4)).toThrow(
      /setConcurrency\(runtime, n\): runtime closed has shut down/,
    )
    expect(cancelQueued(runtime)).toBe(0)
    const outcome = await settle(run(runtime, () => 1))
    expect(outcome).toMatchObject({ status: 'cancelled', reason: 'shutdown' })
    expect((outcome as { error: Error }).error.message).toMatch(
      /was cancelled because shutdown\(\) was called on its runtime, which takes no new work/,
    )
  })
})
