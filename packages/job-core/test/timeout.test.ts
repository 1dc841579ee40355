import { describe, expect, it } from 'vitest'
import {
  debounce,
  inspect,
  isTimeoutError,
  type RuntimeOptions,
  run,
  settle,
  type Task,
  TimeoutError,
  withShaper,
} from '../src/index.js'
import { flush, gate, recordedRuntime } from './helpers.js'

function setup(options: Omit<RuntimeOptions, 'clock'> = {}) {
  const { clock, runtime, events, timeline: transitions } = recordedRuntime(options)
  const exits = (task: Task<unknown>) =>
    events.flatMap((e) =>
      e.type === 'task:exited' && e.taskId === task.id ? [{ at: e.at, threw: e.threw }] : [],
    )
  return { clock, runtime, events, transitions, exits }
}

async function errorOf(task: Task<unknown>): Promise<unknown> {
  const outcome = await settle(task)
  if (outcome.status !== 'error') throw new Error(`expected an error, got ${outcome.status}`)
  return outcome.error
}

describe('timeout.attempt', () => {
  it('aborts the attempt’s signal with the TimeoutError and fails the task with it', async () => {
    const { runtime, clock, transitions } = setup()
    let signal: AbortSignal | undefined
    const task = run(
      runtime,
      async (ctx) => {
        signal = ctx.signal
        await ctx.sleep(1_000)
        return 'late'
      },
      { timeout: { attempt: 100 } },
    )
    await clock.advance(99)
    expect(task.state).toBe('running')
    expect(signal!.aborted).toBe(false)
    await clock.advance(1)
    const error = await errorOf(task)
    expect(error).toBeInstanceOf(TimeoutError)
    expect(error).toMatchObject({
      name: 'TimeoutError',
      phase: 'attempt',
      ms: 100,
      taskId: task.id,
    })
    expect((error as Error).message).toBe(
      `Task #${task.id} exceeded its attempt timeout of 100 ms.`,
    )
    expect(isTimeoutError(error)).toBe(true)
    expect(signal!.aborted).toBe(true)
    expect(signal!.reason).toBe(error)
    expect(transitions(task)).toEqual(['idle>queued@0', 'queued>running@0', 'running>error@100'])
    expect(clock.pending).toBe(0)
  })

  it('a plain number is the per-attempt limit', async () => {
    const { runtime, clock } = setup()
    const task = run(runtime, (ctx) => ctx.sleep(50), { timeout: 20 })
    await clock.advance(20)
    expect(await errorOf(task)).toMatchObject({ phase: 'attempt', ms: 20 })
  })

  it('an attempt that finishes in time clears its timer', async () => {
    const { runtime, clock } = setup()
    const task = run(runtime, (ctx) => ctx.sleep(10).then(() => 'in time'), {
      timeout: { attempt: 100, total: 1_000, queue: 50 },
    })
    await clock.advance(10)
    expect(await task).toBe('in time')
    expect(clock.pending).toBe(0)
  })

  it('a body that ignores its signal keeps its slot until it leaves, then task:exited reports it', async () => {
    const { runtime, clock, exits } = setup({ concurrency: 1 })
    const body = gate<string>()
    const task = run(runtime, () => body.promise, { timeout: { attempt: 100 } })
    const next = run(runtime, () => 'next')
    await clock.advance(100)
    expect(task.state).toBe('error')
    // Honest slot: the ignored body still runs, so `next` still waits.
    expect(next.state).toBe('queued')
    expect(inspect(runtime).sizes).toMatchObject({ runningBodies: 1, slotsInUse: 1, liveTasks: 1 })
    expect(exits(task)).toEqual([])
    await clock.advance(400)
    body.open('finally')
    await flush()
    expect(exits(task)).toEqual([{ at: 500, threw: undefined }])
    expect(await next).toBe('next')
    expect(inspect(runtime).sizes).toMatchObject({ runningBodies: 0, slotsInUse: 0, liveTasks: 0 })
  })

  it('task:exited carries what a timed-out body threw when it left', async () => {
    const { runtime, clock, exits } = setup()
    const task = run(runtime, (ctx) => ctx.sleep(1_000), { timeout: { attempt: 30 } })
    await clock.advance(30)
    await flush()
    const all = exits(task)
    expect(all.map((e) => e.at)).toEqual([30])
    const threw = all[0]!.threw as DOMException & { cause?: unknown }
    // ctx.sleep rejects with an AbortError whose cause is the signal's reason.
    expect(threw.name).toBe('AbortError')
    expect(threw.cause).toBe(await errorOf(task))
  })

  it('is retryable by default: a timed-out attempt is followed by the next one', async () => {
    const { runtime, clock, events, transitions, exits } = setup({ random: () => 0.5 })
    const signals: AbortSignal[] = []
    const task = run(
      runtime,
      async (ctx) => {
        signals.push(ctx.signal)
        await ctx.sleep(ctx.attempt === 1 ? 1_000 : 10)
        return `attempt ${ctx.attempt}`
      },
      { retry: 2, timeout: { attempt: 100 } },
    )
    await clock.advance(100)
    expect(task.state).toBe('parked:retry')
    const retry = events.find((e) => e.type === 'task:retry')
    expect(retry).toMatchObject({ taskId: task.id, attempt: 1, delay: 50 })
    expect((retry as { error: unknown }).error).toMatchObject({ phase: 'attempt' })
    expect(signals[0]!.reason).toBe((retry as { error: unknown }).error)
    await clock.advance(60)
    expect(await task).toBe('attempt 2')
    expect(signals[1]!.aborted).toBe(false)
    expect(transitions(task)).toEqual([
      'idle>queued@0',
      'queued>running@0',
      'running>parked:retry@100',
      'parked:retry>queued@150',
      'queued>running@150',
      'running>success@160',
    ])
    expect(exits(task).map((e) => e.at)).toEqual([100])
  })

  it('retryIf can refuse to retry timeouts', async () => {
    const { runtime, clock } = setup()
    let attempts = 0
    const task = run(
      runtime,
      async (ctx) => {
        attempts++
        await ctx.sleep(1_000)
      },
      { retry: { attempts: 3, retryIf: (e) => !isTimeoutError(e) }, timeout: 100 },
    )
    await clock.advance(100)
    expect(await errorOf(task)).toMatchObject({ phase: 'attempt' })
    expect(attempts).toBe(1)
  })

  it('each attempt gets a fresh limit, counted from its own start', async () => {
    const { runtime, clock, transitions } = setup()
    const task = run(runtime, (ctx) => ctx.sleep(1_000), {
      retry: { attempts: 2, delay: 30 },
      timeout: { attempt: 100 },
    })
    await clock.advance(1_000)
    expect(await errorOf(task)).toMatchObject({ phase: 'attempt' })
    expect(transitions(task).slice(2)).toEqual([
      'running>parked:retry@100',
      'parked:retry>queued@130',
      'queued>running@130',
      'running>error@230',
    ])
  })
})

describe('timeout.total', () => {
  it('fires during a retry wait: the task ends in error, the pending retry is dropped', async () => {
    const { runtime, clock, transitions, events } = setup()
    let attempts = 0
    const task = run(
      runtime,
      () => {
        attempts++
        throw new Error('flaky')
      },
      { retry: { attempts: 5, delay: 1_000 }, timeout: { total: 300 } },
    )
    expect(task.state).toBe('parked:retry')
    await clock.advance(300)
    const error = await errorOf(task)
    expect(error).toMatchObject({ name: 'TimeoutError', phase: 'total', ms: 300, taskId: task.id })
    expect(transitions(task)).toEqual([
      'idle>queued@0',
      'queued>running@0',
      'running>parked:retry@0',
      'parked:retry>error@300',
    ])
    const last = events.filter((e) => e.type === 'task:transition' && e.taskId === task.id).at(-1)
    expect((last as { error?: unknown }).error).toBe(error)
    expect(clock.pending).toBe(0)
    await clock.advance(5_000)
    expect(attempts).toBe(1)
  })

  it('fires while an attempt runs: aborts its signal, and is not retried', async () => {
    const { runtime, clock, exits } = setup()
    let signal: AbortSignal | undefined
    let attempts = 0
    const task = run(
      runtime,
      async (ctx) => {
        attempts++
        signal = ctx.signal
        await ctx.sleep(1_000)
      },
      { retry: { attempts: 5, delay: 0, retryIf: () => true }, timeout: { total: 200 } },
    )
    await clock.advance(200)
    const error = await errorOf(task)
    expect(error).toMatchObject({ phase: 'total' })
    expect(signal!.reason).toBe(error)
    await clock.advance(1_000)
    expect(attempts).toBe(1)
    expect(exits(task).map((e) => e.at)).toEqual([200])
  })

  it('counts from run(): time in the queue and in a shaper window is included', async () => {
    const { runtime, clock } = setup({ concurrency: 1 })
    const blocker = run(runtime, (ctx) => ctx.sleep(80))
    const queued = run(runtime, (ctx) => ctx.sleep(50), { timeout: { total: 100 } })
    const shaped = run(
      runtime,
      withShaper((ctx) => ctx.sleep(1), debounce(150), { key: 'k' }),
      { timeout: { total: 100 } },
    )
    await clock.advance(80)
    expect(queued.state).toBe('running')
    await clock.advance(20)
    expect(await errorOf(queued)).toMatchObject({ phase: 'total' })
    expect(await errorOf(shaped)).toMatchObject({ phase: 'total' })
    // The shaped call left its window empty; the window closes and is dropped.
    await clock.advance(50)
    expect(inspect(runtime).sizes).toMatchObject({ shaperWindows: 0, liveTasks: 0 })
    await blocker
  })

  it('a total shorter than the attempt limit wins over it, and the attempt timer is cleared', async () => {
    const { runtime, clock } = setup()
    const body = gate()
    const task = run(runtime, () => body.promise, { timeout: { attempt: 500, total: 100 } })
    await clock.advance(100)
    expect(await errorOf(task)).toMatchObject({ phase: 'total', ms: 100 })
    // The body ignores its signal and still runs, but no timer is left for it.
    expect(inspect(runtime).sizes.runningBodies).toBe(1)
    expect(clock.pending).toBe(0)
    body.open()
    await flush()
    expect(inspect(runtime).sizes.runningBodies).toBe(0)
  })

  it('cancelling a running task clears its attempt timer', async () => {
    const { runtime, clock } = setup()
    const body = gate()
    const task = run(runtime, () => body.promise, { timeout: { attempt: 500 } })
    task.cancel()
    expect(clock.pending).toBe(0)
    body.open()
    await expect(task).rejects.toMatchObject({ reason: 'abort' })
  })
})

describe('timeout.queue', () => {
  it('a task that waits longer than the limit in queued ends in error, withdrawn, its body never run', async () => {
    const { runtime, clock, transitions } = setup({ concurrency: 1 })
    const blocker = run(runtime, (ctx) => ctx.sleep(500))
    let ran = false
    const task = run(
      runtime,
      () => {
        ran = true
      },
      { timeout: { queue: 100 } },
    )
    expect(inspect(runtime).sizes.queued).toBe(1)
    await clock.advance(100)
    const error = await errorOf(task)
    expect(error).toMatchObject({ name: 'TimeoutError', phase: 'queue', ms: 100, taskId: task.id })
    expect(transitions(task)).toEqual(['idle>queued@0', 'queued>error@100'])
    expect(inspect(runtime).sizes.queued).toBe(0)
    await clock.advance(400)
    await blocker
    expect(ran).toBe(false)
  })

  it('a task that gets a slot in time is not affected', async () => {
    const { runtime, clock } = setup({ concurrency: 1 })
    run(runtime, (ctx) => ctx.sleep(99))
    const task = run(runtime, (ctx) => ctx.sleep(1_000).then(() => 'ran'), {
      timeout: { queue: 100 },
    })
    await clock.advance(99)
    expect(task.state).toBe('running')
    await clock.advance(1_000)
    expect(await task).toBe('ran')
  })

  it('applies again each time a retried attempt queues', async () => {
    const { runtime, clock, transitions } = setup({ concurrency: 1 })
    const task = run(
      runtime,
      (ctx) => {
        if (ctx.attempt === 1) throw new Error('first')
        return 'second'
      },
      { retry: { attempts: 2, delay: 10 }, timeout: { queue: 50 } },
    )
    // While it waits to retry, another task takes the only slot for longer than 50 ms.
    run(runtime, (ctx) => ctx.sleep(200))
    await clock.advance(60)
    expect(await errorOf(task)).toMatchObject({ phase: 'queue' })
    expect(transitions(task).slice(2)).toEqual([
      'running>parked:retry@0',
      'parked:retry>queued@10',
      'queued>error@60',
    ])
    await clock.advance(200)
  })

  it('a started task never hits its queue limit', async () => {
    const { runtime, clock } = setup()
    const task = run(runtime, (ctx) => ctx.sleep(1_000).then(() => 'long run'), {
      timeout: { queue: 10 },
    })
    await clock.advance(1_000)
    expect(await task).toBe('long run')
  })
})
