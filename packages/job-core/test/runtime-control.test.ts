import { describe, expect, it } from 'vitest'
import {
  cancelQueued,
  counts,
  isPaused,
  pause,
  resume,
  run,
  setConcurrency,
  settle,
  shutdown,
  type Task,
  whenIdle,
  whenQueueBelow,
} from '../src/index.js'
import { flush, gate, recordedRuntime } from './helpers.js'

/** Whether `promise` has settled after the pending callbacks ran. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  )
  await flush()
  return settled
}

describe('counts', () => {
  it('reports live, parked, queued, running and exiting from the kernel counters', async () => {
    const { runtime, clock } = recordedRuntime({ concurrency: 2 })
    expect(counts(runtime)).toEqual({ live: 0, parked: 0, queued: 0, running: 0, exiting: 0 })
    const first = gate()
    const ignoring = run(runtime, () => first.promise) // ignores its signal
    run(runtime, (ctx) => ctx.sleep(10))
    run(runtime, () => 1)
    run(runtime, () => 2, { dependsOn: [ignoring] })
    expect(counts(runtime)).toEqual({ live: 4, parked: 1, queued: 1, running: 2, exiting: 0 })
    ignoring.cancel() // the dependent is cancelled too ('dependency')
    expect(counts(runtime)).toEqual({ live: 2, parked: 0, queued: 1, running: 2, exiting: 1 })
    first.open()
    await flush()
    // The slot came back: the queued task ran synchronously.
    expect(counts(runtime)).toEqual({ live: 1, parked: 0, queued: 0, running: 1, exiting: 0 })
    await clock.advance(10)
    expect(counts(runtime)).toEqual({ live: 0, parked: 0, queued: 0, running: 0, exiting: 0 })
  })

  it('counts a retry wait as parked and its next attempt as queued', async () => {
    const { runtime, clock } = recordedRuntime({ concurrency: 1 })
    const blocker = gate()
    let calls = 0
    const flaky = run(
      runtime,
      () => {
        calls++
        if (calls === 1) throw new Error('once')
        return 'ok'
      },
      { retry: { attempts: 2, delay: 50 } },
    )
    expect(flaky.state).toBe('parked:retry')
    expect(counts(runtime)).toMatchObject({ live: 1, parked: 1, queued: 0, running: 0 })
    const holder = run(runtime, () => blocker.promise)
    await clock.advance(50)
    expect(flaky.state).toBe('queued')
    expect(counts(runtime)).toMatchObject({ live: 2, parked: 0, queued: 1, running: 1 })
    blocker.open()
    expect(await flaky).toBe('ok')
    await holder
  })

  it('rejects something that is not a runtime', () => {
    expect(() => counts({ name: 'fake' })).toThrow(
      /counts\(runtime\): expected a runtime from createRuntime\(\), got an object/,
    )
  })
})

describe('whenIdle', () => {
  it('resolves at once on an idle runtime', async () => {
    const { runtime } = recordedRuntime()
    expect(await isSettled(whenIdle(runtime))).toBe(true)
  })

  it('waits for parked and retrying tasks, not only running ones', async () => {
    const { runtime, clock } = recordedRuntime({ concurrency: 1 })
    let calls = 0
    const retrying = run(
      runtime,
      () => {
        if (++calls < 3) throw new Error(`attempt ${calls}`)
        return calls
      },
      { retry: { attempts: 3, delay: 100 } },
    )
    const dependent = run(runtime, () => 'after', { dependsOn: [retrying] })
    expect(dependent.state).toBe('parked:dependencies')
    const idle = whenIdle(runtime)
    expect(await isSettled(idle)).toBe(false)
    await clock.advance(100)
    expect(retrying.state).toBe('parked:retry')
    expect(await isSettled(idle)).toBe(false)
    await clock.advance(100)
    expect(await isSettled(idle)).toBe(true)
    expect(await retrying).toBe(3)
    expect(await dependent).toBe('after')
  })

  it('waits for a cancelled body that has not exited: its slot is still held', async () => {
    const { runtime } = recordedRuntime({ concurrency: 1 })
    const body = gate()
    const task = run(runtime, () => body.promise)
    task.cancel()
    const idle = whenIdle(runtime)
    expect(await isSettled(idle)).toBe(false)
    body.open()
    expect(await isSettled(idle)).toBe(true)
    expect((await settle(task)).status).toBe('cancelled')
  })
})

describe('whenQueueBelow', () => {
  it('resolves once fewer than n tasks are queued', async () => {
    const { runtime } = recordedRuntime({ concurrency: 1 })
    const bodies = [gate(), gate(), gate(), gate()]
    const tasks = bodies.map((body) => run(runtime, () => body.promise))
    expect(counts(runtime).queued).toBe(3)
    const belowThree = whenQueueBelow(runtime, 3)
    const belowTwo = whenQueueBelow(runtime, 2)
    expect(await isSettled(whenQueueBelow(runtime, 4))).toBe(true)
    expect(await isSettled(belowThree)).toBe(false)
    bodies[0]!.open()
    expect(await isSettled(belowThree)).toBe(true)
    expect(await isSettled(belowTwo)).toBe(false)
    tasks[3]!.cancel() // leaving the queue by a cancel counts too
    expect(await isSettled(belowTwo)).toBe(true)
    for (const body of bodies) body.open()
    await Promise.all(tasks.slice(0, 3))
  })

  it('rejects an n that can never or always be met', () => {
    const { runtime } = recordedRuntime()
    expect(() => whenQueueBelow(runtime, 0)).toThrow(RangeError)
    expect(() => whenQueueBelow(runtime, 0)).toThrow(
      /whenQueueBelow\(runtime, n\): n must be an integer ≥ 1.*got 0/,
    )
    expect(() => whenQueueBelow(runtime, 1.5)).toThrow(/got 1\.5/)
    expect(() => whenQueueBelow(runtime, '3' as never)).toThrow(/got '3'/)
  })
})

describe('pause / resume', () => {
  it('admits while paused, starts nothing, and resume starts what fits before it returns', async () => {
    const { runtime } = recordedRuntime({ concurrency: 2 })
    const running = gate()
    const before = run(runtime, () => running.promise)
    pause(runtime)
    expect(isPaused(runtime)).toBe(true)
    const tasks = [
      run(runtime, () => 'a'),
      run(runtime, () => 'b', { priority: 5 }),
      run(runtime, () => 'c'),
    ]
    expect(tasks.map((t) => t.state)).toEqual(['queued', 'queued', 'queued'])
    expect(before.state).toBe('running') // running bodies go on
    const order: string[] = []
    for (const t of tasks) void t.then((v) => order.push(v))
    resume(runtime)
    expect(isPaused(runtime)).toBe(false)
    // One slot free: the highest priority started before resume returned (its
    // body enters through the async context of its run() call).
    expect(tasks.map((t) => t.state)).toEqual(['queued', 'running', 'queued'])
    running.open()
    expect(await Promise.all(tasks)).toEqual(['a', 'b', 'c'])
    expect(order).toEqual(['b', 'a', 'c'])
  })

  it('a retry that comes due while paused waits in queued until resume', async () => {
    const { runtime, clock, transitions } = recordedRuntime()
    let calls = 0
    const task = run(
      runtime,
      () => {
        if (++calls === 1) throw new Error('first')
        return calls
      },
      { retry: { attempts: 2, delay: 30 } },
    )
    expect(task.state).toBe('parked:retry')
    pause(runtime)
    await clock.advance(30)
    expect(task.state).toBe('queued')
    await clock.advance(1_000)
    expect(task.state).toBe('queued')
    resume(runtime)
    expect(task.state).toBe('running')
    expect(await task).toBe(2)
    expect(transitions(task.id)).toEqual([
      'idle>queued',
      'queued>running',
      'running>parked:retry',
      'parked:retry>queued',
      'queued>running',
      'running>success',
    ])
  })

  it('pause and resume twice are harmless; resume on a running runtime is a no-op', () => {
    const { runtime } = recordedRuntime()
    resume(runtime)
    pause(runtime)
    pause(runtime)
    expect(isPaused(runtime)).toBe(true)
    resume(runtime)
    resume(runtime)
    expect(isPaused(runtime)).toBe(false)
    expect(run(runtime, () => 1).state).toBe('success')
  })
})

describe('setConcurrency', () => {
  it('raising it starts waiting tasks before it returns, priority then FIFO', async () => {
    const { runtime } = recordedRuntime({ concurrency: 1 })
    const bodies = [gate(), gate(), gate(), gate()]
    const tasks = [
      run(runtime, () => bodies[0]!.promise),
      run(runtime, () => bodies[1]!.promise),
      run(runtime, () => bodies[2]!.promise, { priority: 1 }),
      run(runtime, () => bodies[3]!.promise),
    ]
    expect(tasks.map((t) => t.state)).toEqual(['running', 'queued', 'queued', 'queued'])
    setConcurrency(runtime, 3)
    expect(tasks.map((t) => t.state)).toEqual(['running', 'running', 'running', 'queued'])
    expect(counts(runtime)).toMatchObject({ running: 3, queued: 1 })
    for (const body of bodies) body.open()
    await Promise.all(tasks)
  })

  it('lowering it aborts nothing and starts nothing until running < n', async () => {
    const { runtime } = recordedRuntime({ concurrency: 3 })
    const bodies = [gate(), gate(), gate(), gate()]
    const tasks = bodies.map((body) =>
      run(runtime, (ctx) => body.promise.then(() => ctx.signal.aborted)),
    )
    setConcurrency(runtime, 1)
    expect(tasks.map((t) => t.state)).toEqual(['running', 'running', 'running', 'queued'])
    bodies[0]!.open()
    await flush()
    expect(tasks[3]!.state).toBe('queued') // two still run: over the new limit
    bodies[1]!.open()
    await flush()
    expect(tasks[3]!.state).toBe('queued') // one runs: at the limit
    bodies[2]!.open()
    await flush()
    expect(tasks[3]!.state).toBe('running')
    bodies[3]!.open()
    expect(await Promise.all(tasks)).toEqual([false, false, false, false])
  })

  it('validates like createRuntime', () => {
    const { runtime } = recordedRuntime()
    for (const bad of [0, -1, Number.NaN, 1.5]) {
      expect(() => setConcurrency(runtime, bad)).toThrow(RangeError)
    }
    expect(() => setConcurrency(runtime, 0)).toThrow(
      /setConcurrency\(runtime, n\): concurrency must be a positive integer or Infinity, got 0/,
    )
    setConcurrency(runtime, Number.POSITIVE_INFINITY)
  })
})

describe('cancelQueued', () => {
  it('cancels queued and parked tasks, leaves running bodies alone, and every promise settles', async () => {
    const { runtime, clock } = recordedRuntime({ concurrency: 1 })
    const body = gate()
    const runningTask = run(runtime, (ctx) => body.promise.then(() => ctx.signal.aborted))
    const queued = run(runtime, () => 'q')
    const parked = run(runtime, () => 'p', { dependsOn: [runningTask] })
    let calls = 0
    const otherRuntime = recordedRuntime()
    const retrying = run(
      otherRuntime.runtime,
      () => {
        calls++
        throw new Error('no')
      },
      { retry: { attempts: 3, delay: 10 } },
    )
    expect(cancelQueued(runtime)).toBe(2)
    const outcomes: Task<unknown>[] = [queued, parked]
    for (const task of outcomes) {
      expect(task.state).toBe('cancelled')
      expect(task.cancelReason).toBe('abort')
    }
    await expect(queued).rejects.toMatchObject({ name: 'CancelledError', reason: 'abort' })
    expect(runningTask.state).toBe('running')
    expect(cancelQueued(otherRuntime.runtime)).toBe(1) // a retry wait is not a running body
    expect(retrying.state).toBe('cancelled')
    await clock.advance(10)
    expect(calls).toBe(1)
    body.open()
    expect(await runningTask).toBe(false)
    await settle(parked)
    await settle(retrying)
  })
})

describe('pause and shutdown', () => {
  it('a draining shutdown resumes a paused runtime, so queued work runs to the end', async () => {
    const { runtime } = recordedRuntime({ concurrency: 1 })
    pause(runtime)
    const tasks = [run(runtime, () => 'a'), run(runtime, () => 'b')]
    const report = await shutdown(runtime)
    expect(isPaused(runtime)).toBe(false)
    expect(await Promise.all(tasks)).toEqual(['a', 'b'])
    expect(report).toMatchObject({ mode: 'drain', completed: 2, cancelled: 0 })
  })

  it('a cancelling shutdown cancels what a pause held', async () => {
    const { runtime } = recordedRuntime()
    pause(runtime)
    const task = run(runtime, () => 'never')
    const report = await shutdown(runtime, { mode: 'cancel' })
    expect(task.cancelReason).toBe('shutdown')
    expect(report).toMatchObject({ mode: 'cancel', cancelled: 1 })
  })
})
