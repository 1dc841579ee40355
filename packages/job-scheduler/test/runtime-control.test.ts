import {
  type Backend,
  type BackendJob,
  counts,
  createRuntime,
  createTestClock,
  pause,
  resume,
  run,
  setConcurrency,
  shutdown,
} from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import { createAggregateScheduling, withAggregate } from '../src/index.js'
import { flushTimes, gate } from './helpers.js'

const order = (id: string) => ({ aggregate: 'sales.Order', id })

describe('runtime control through the aggregate backend', () => {
  it('pause holds bound and unbound tasks in queued; resume starts them in group order', async () => {
    const runtime = createRuntime({ plugins: [createAggregateScheduling({ parallelism: 16 })] })
    pause(runtime)
    const log: string[] = []
    const tasks = [
      run(
        runtime,
        withAggregate(async () => void log.push('a1'), order('a')),
      ),
      run(
        runtime,
        withAggregate(async () => void log.push('a2'), order('a')),
      ),
      run(runtime, async () => void log.push('plain')),
    ]
    await flushTimes(3)
    expect(tasks.map((t) => t.state)).toEqual(['queued', 'queued', 'queued'])
    expect(counts(runtime).queued).toBe(3)
    expect(log).toEqual([])
    resume(runtime)
    await Promise.all(tasks)
    expect(log.indexOf('a1')).toBeLessThan(log.indexOf('a2'))
    await shutdown(runtime)
  })

  it('setConcurrency resizes the inner backend: raising it starts waiting groups', async () => {
    const runtime = createRuntime({
      concurrency: 1,
      plugins: [createAggregateScheduling({ parallelism: 16, schedulerParallelism: 4 })],
    })
    const bodies = [gate(), gate(), gate()]
    const tasks = ['x', 'y', 'z'].map((id, i) =>
      run(
        runtime,
        withAggregate(() => bodies[i]!.promise, order(id)),
      ),
    )
    await flushTimes(3)
    expect(counts(runtime)).toMatchObject({ running: 1, queued: 2 })
    setConcurrency(runtime, 3)
    await flushTimes(3)
    expect(counts(runtime)).toMatchObject({ running: 3, queued: 0 })
    for (const body of bodies) body.open()
    await Promise.all(tasks)
    await shutdown(runtime)
  })

  it('rateLimit applies to bound tasks on the runtime clock', async () => {
    const clock = createTestClock()
    const runtime = createRuntime({
      clock,
      rateLimit: { limit: 1, interval: 100 },
      plugins: [createAggregateScheduling({ parallelism: 16 })],
    })
    const tasks = ['p', 'q'].map((id) =>
      run(
        runtime,
        withAggregate(async () => id, order(id)),
      ),
    )
    await flushTimes(3)
    expect(tasks.map((t) => t.state)).toEqual(['success', 'queued'])
    await clock.advance(100)
    expect(await Promise.all(tasks)).toEqual(['p', 'q'])
    await shutdown(runtime)
  })

  it('declines drop-oldest with a TypeError naming the missing capability', () => {
    expect(() =>
      createRuntime({
        maxQueued: 10,
        overflow: 'drop-oldest',
        plugins: [createAggregateScheduling()],
      }),
    ).toThrow(
      /createRuntime\(\{ overflow: 'drop-oldest' \}\): the runtime's backend \(AggregateBackend\) does not support the 'dropCandidate' capability/,
    )
  })

  it('says which capability its inner backend lacks', () => {
    let running = 0
    const bare: Backend = {
      enqueue: (job: BackendJob) => {
        running++
        job.start()
      },
      withdraw: () => {},
      release: () => void running--,
      onPreCancel: () => () => {},
      preCancel: () => {},
      queued: 0,
      get running() {
        return running
      },
    }
    const runtime = createRuntime({ backend: bare, plugins: [createAggregateScheduling()] })
    expect(() => pause(runtime)).toThrow(TypeError)
    expect(() => pause(runtime)).toThrow(
      /createAggregateScheduling: the backend it wraps \(Object\) has no setGate\(\)/,
    )
    expect(() => setConcurrency(runtime, 2)).toThrow(/has no setConcurrency\(\)/)
  })
})
