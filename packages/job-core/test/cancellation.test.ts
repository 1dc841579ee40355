import { describe, expect, it } from 'vitest'
import {
  CancelledError,
  debounce,
  inspect,
  isCancelledError,
  run,
  settle,
  withShaper,
} from '../src/index.js'
import { collectUnhandled, flush, gate, recordedRuntime } from './helpers.js'

describe('cancellation', () => {
  it('cancelling a running task rejects at once, aborts ctx.signal, and keeps the slot until the body exits', async () => {
    const { runtime, clock, events } = recordedRuntime({ concurrency: 1 })
    let seenReason: unknown
    const first = run(runtime, async (ctx) => {
      ctx.signal.addEventListener('abort', () => {
        seenReason = ctx.signal.reason
      })
      await ctx.sleep(100)
    })
    const second = run(runtime, () => 'second')
    expect(second.state).toBe('queued')
    first.cancel()
    expect(first.state).toBe('cancelled')
    expect(first.cancelReason).toBe('abort')
    expect(seenReason).toBeInstanceOf(CancelledError)
    // The body has not exited yet (sleep rejects in a microtask): the slot is still taken.
    expect(second.state).toBe('queued')
    expect(inspect(runtime).sizes.runningBodies).toBe(1)
    await expect(first).rejects.toMatchObject({
      name: 'CancelledError',
      reason: 'abort',
      taskId: first.id,
    })
    await flush()
    expect(second.state).toBe('success')
    const exited = events.find((e) => e.type === 'task:exited')
    expect(exited).toMatchObject({ type: 'task:exited', taskId: first.id })
    expect((exited as { threw?: unknown }).threw).toMatchObject({ name: 'AbortError' })
    expect(clock.pending).toBe(0)
  })

  it('a body that ignores its signal keeps its slot, visibly, until it returns', async () => {
    const { runtime, events } = recordedRuntime({ concurrency: 1 })
    const stubborn = gate<string>()
    const task = run(runtime, () => stubborn.promise)
    const next = run(runtime, () => 'next')
    task.cancel()
    await flush()
    expect(next.state).toBe('queued')
    expect(inspect(runtime).sizes).toMatchObject({ liveTasks: 1, runningBodies: 1, slotsInUse: 1 })
    stubborn.open('late')
    await flush()
    expect(next.state).toBe('success')
    expect(events.filter((e) => e.type === 'task:exited')).toEqual([
      expect.objectContaining({ type: 'task:exited', taskId: task.id }),
    ])
  })

  it('an already-aborted RunOptions.signal cancels before anything runs', () => {
    const { runtime, transitions } = recordedRuntime()
    const controller = new AbortController()
    controller.abort(new Error('user left'))
    let ran = false
    const task = run(
      runtime,
      () => {
        ran = true
      },
      { signal: controller.signal },
    )
    expect(ran).toBe(false)
    expect(task.state).toBe('cancelled')
    expect(task.cancelReason).toBe('abort')
    expect(transitions(task.id)).toEqual(['idle>cancelled'])
    return expect(task).rejects.toMatchObject({ reason: 'abort', cause: controller.signal.reason })
  })

  it('aborting RunOptions.signal later cancels a queued task and frees its queue entry', async () => {
    const { runtime } = recordedRuntime({ concurrency: 1 })
    const hold = gate()
    run(runtime, () => hold.promise)
    const controller = new AbortController()
    const task = run(runtime, () => 1, { signal: controller.signal })
    expect(inspect(runtime).sizes.queued).toBe(1)
    controller.abort()
    expect(task.state).toBe('cancelled')
    expect(inspect(runtime).sizes.queued).toBe(0)
    hold.open()
    await flush()
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
  })

  it('ctx.sleep rejects at once when the task is already cancelled', async () => {
    const { runtime } = recordedRuntime()
    const outcome = gate<unknown>()
    const task = run(runtime, async (ctx) => {
      await Promise.resolve()
      try {
        await ctx.sleep(10)
        outcome.open('slept')
      } catch (error) {
        outcome.open(error)
      }
    })
    task.cancel()
    expect(await outcome.promise).toMatchObject({ name: 'AbortError' })
  })

  it('no task causes an unhandledRejection on its own', async () => {
    const unhandled = await collectUnhandled(async () => {
      const { runtime, clock } = recordedRuntime({ concurrency: 2 })
      run(runtime, () => Promise.reject(new Error('nobody awaits me')))
      run(runtime, () => {
        throw new Error('sync, nobody awaits me')
      })
      const cancelled = run(runtime, (ctx) => ctx.sleep(50))
      cancelled.cancel()
      void cancelled.promise // read but never awaited
      const queued = run(runtime, () => 1)
      queued.cancel()
      await clock.advance(100)
    })
    expect(unhandled).toEqual([])
  })

  it('a failing or cancelled task leaves nothing behind once settled', async () => {
    const { runtime, clock } = recordedRuntime({ concurrency: 2 })
    const tasks = []
    for (let i = 0; i < 50; i++) {
      tasks.push(run(runtime, () => Promise.reject(new Error(`e${i}`))))
      const sleeping = run(runtime, (ctx) => ctx.sleep(10), { timeout: { total: 5 } })
      tasks.push(sleeping)
      if (i % 2 === 0) sleeping.cancel()
    }
    await clock.advance(20)
    await Promise.all(tasks.map((t) => settle(t)))
    await flush()
    expect(inspect(runtime).sizes).toEqual({
      liveTasks: 0,
      queued: 0,
      slotsInUse: 0,
      runningBodies: 0,
      shaperWindows: 0,
      listeners: 1,
      attemptWrappers: 0,
    })
    expect(clock.pending).toBe(0)
  })

  it('isCancelledError recognises errors from another copy of the package (brand, not instanceof)', () => {
    const foreign = Object.assign(new Error('x'), {
      [Symbol.for('@vega/job-core/CancelledError')]: true,
    })
    expect(isCancelledError(foreign)).toBe(true)
    expect(isCancelledError(new Error('x'))).toBe(false)
    expect(isCancelledError(null)).toBe(false)
    expect(isCancelledError(new CancelledError('abort', 1))).toBe(true)
  })
})

describe('the CancelledError of a cancel', () => {
  it('an abort carries the stack of the cancel() call, and every read gives that one error', async () => {
    const { runtime } = recordedRuntime({ concurrency: 1 })
    const hold = gate()
    run(runtime, () => hold.promise)
    const queued = run(runtime, () => 1)
    function cancelFromHere() {
      queued.cancel()
    }
    cancelFromHere()
    const outcome = await settle(queued)
    expect(outcome.status).toBe('cancelled')
    const error = (outcome as { error: Error }).error
    expect(error.stack).toContain('cancelFromHere')
    const again = await settle(queued)
    expect((again as { error: Error }).error).toBe(error)
    await expect(queued.promise).rejects.toBe(error)
    hold.open()
  })

  it('an abort made on behalf of another task (cancelledBy) carries no stack: it is bookkeeping, named by cancelledBy', async () => {
    const own = new CancelledError('abort', 7)
    const onBehalf = new CancelledError('abort', 8, { cancelledBy: 9 })
    expect(own.stack).toContain('cancellation.test')
    expect(onBehalf.stack).not.toContain('cancellation.test')
    expect(onBehalf.stack).toBe(`CancelledError: ${onBehalf.message}`)
    expect(onBehalf.cancelledBy).toBe(9)
  })

  it('a merged call builds its error only when it is read', async () => {
    // A CancelledError of a merge is built without a stack: its constructor
    // sets Error.stackTraceLimit to 0 around super(). Counting those writes
    // counts the errors built.
    const descriptor = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit')!
    let limit = Error.stackTraceLimit
    let stacklessBuilds = 0
    Object.defineProperty(Error, 'stackTraceLimit', {
      configurable: true,
      get: () => limit,
      set: (value: number) => {
        if (value === 0) stacklessBuilds++
        limit = value
      },
    })
    try {
      const { runtime, clock } = recordedRuntime()
      const search = withShaper(() => 'results', debounce(10), { key: 'search' })
      const merged = run(runtime, search)
      const survivor = run(runtime, search)
      expect(merged.state).toBe('cancelled')
      await clock.advance(10)
      expect(await survivor).toBe('results')
      const outcome = await settle(merged)
      expect(outcome).toMatchObject({ status: 'cancelled', reason: 'superseded' })
      expect(stacklessBuilds).toBe(0)
      const error = (outcome as { error: Error }).error
      expect(stacklessBuilds).toBe(1)
      expect(error.message).toBe(`Task #${merged.id} was cancelled (superseded).`)
      expect((outcome as { error: Error }).error).toBe(error)
      expect(stacklessBuilds).toBe(1)
    } finally {
      Object.defineProperty(Error, 'stackTraceLimit', descriptor)
    }
  })
})
