import { describe, expect, it } from 'vitest'
import {
  CancelledError,
  createRuntime,
  createTestClock,
  inspect,
  type RuntimeOptions,
  run,
  settle,
  type Task,
} from '../src/index.js'
import { flush, gate, recordedRuntime } from './helpers.js'

function setup(options: Omit<RuntimeOptions, 'clock'> = {}) {
  const { clock, runtime, events, timeline: transitions } = recordedRuntime(options)
  const retries = (task: Task<unknown>) =>
    events.flatMap((e) =>
      e.type === 'task:retry' && e.taskId === task.id
        ? [{ attempt: e.attempt, delay: e.delay, error: e.error, at: e.at }]
        : [],
    )
  return { clock, runtime, events, transitions, retries }
}

/** A body that fails its first `failures` attempts with `Error('fail <attempt>')`. */
function failing(failures: number, attempts: number[] = []) {
  return async (ctx: { attempt: number }) => {
    attempts.push(ctx.attempt)
    if (ctx.attempt <= failures) throw new Error(`fail ${ctx.attempt}`)
    return `ok on ${ctx.attempt}`
  }
}

describe('retry: attempts and the parked:retry state', () => {
  it('an attempt count past 255 keeps the task state and stage intact (they share one packed word)', async () => {
    const { runtime, clock } = setup()
    const attempts: number[] = []
    const task = run(runtime, failing(299, attempts), { retry: { attempts: 300, delay: () => 1 } })
    for (let i = 0; i < 299; i++) {
      await flush()
      expect(task.state).toBe('parked:retry')
      expect(task.attempt).toBe(i + 1)
      await clock.advance(1)
    }
    expect(await task).toBe('ok on 300')
    expect(task.state).toBe('success')
    expect(task.attempt).toBe(300)
    expect(attempts).toHaveLength(300)
    expect(attempts[299]).toBe(300)
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
  })

  it('a failed attempt goes running → parked:retry → queued → running, with task:retry events', async () => {
    const { runtime, clock, transitions, retries } = setup({ random: () => 0.5 })
    const attempts: number[] = []
    const task = run(runtime, failing(2, attempts), { retry: 3 })
    await flush()
    expect(task.state).toBe('parked:retry')
    expect(task.attempt).toBe(1)
    // Default delay: 100·2^(n-1) ms scaled by random() = 0.5 → 50, then 100.
    await clock.advance(49)
    expect(task.state).toBe('parked:retry')
    await clock.advance(1)
    expect(task.state).toBe('parked:retry')
    expect(task.attempt).toBe(2)
    await clock.advance(100)
    expect(await task).toBe('ok on 3')
    expect(attempts).toEqual([1, 2, 3])
    expect(task.attempt).toBe(3)
    expect(transitions(task)).toEqual([
      'idle>queued@0',
      'queued>running@0',
      'running>parked:retry@0',
      'parked:retry>queued@50',
      'queued>running@50',
      'running>parked:retry@50',
      'parked:retry>queued@150',
      'queued>running@150',
      'running>success@150',
    ])
    const seen = retries(task)
    expect(seen.map(({ attempt, delay, at }) => ({ attempt, delay, at }))).toEqual([
      { attempt: 1, delay: 50, at: 0 },
      { attempt: 2, delay: 100, at: 50 },
    ])
    expect(seen.map((r) => (r.error as Error).message)).toEqual(['fail 1', 'fail 2'])
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
    expect(clock.pending).toBe(0)
  })

  it('the running → parked:retry transition carries the error and the attempt', async () => {
    const { runtime, events } = setup({ random: () => 0 })
    const task = run(runtime, failing(1), { retry: 2 })
    await flush()
    const toRetry = events.find((e) => e.type === 'task:transition' && e.to === 'parked:retry')
    expect(toRetry).toMatchObject({ taskId: task.id, from: 'running', attempt: 1 })
    expect(((toRetry as { error?: unknown }).error as Error).message).toBe('fail 1')
    // task:retry follows its transition directly.
    const index = events.indexOf(toRetry!)
    expect(events[index + 1]).toMatchObject({
      type: 'task:retry',
      taskId: task.id,
      attempt: 1,
      delay: 0,
    })
  })

  it('the last failure ends the task in error with that error; no retry after the last attempt', async () => {
    const { runtime, clock, transitions, retries } = setup({ random: () => 0 })
    const attempts: number[] = []
    const task = run(runtime, failing(5, attempts), { retry: 3 })
    await clock.advance(0)
    await clock.advance(0)
    const outcome = await settle(task)
    expect(outcome.status).toBe('error')
    expect(outcome.status === 'error' && (outcome.error as Error).message).toBe('fail 3')
    expect(attempts).toEqual([1, 2, 3])
    expect(retries(task).map((r) => r.attempt)).toEqual([1, 2])
    expect(transitions(task).at(-1)).toBe('running>error@0')
  })

  it('ctx.attempt is 1-based and grows on every retry', async () => {
    const { runtime, clock } = setup({ random: () => 0 })
    const seen: number[] = []
    const task = run(
      runtime,
      (ctx) => {
        seen.push(ctx.attempt)
        if (ctx.attempt < 4) throw new Error('again')
        return ctx.attempt
      },
      { retry: { attempts: 4 } },
    )
    await clock.runAll()
    expect(await task).toBe(4)
    expect(seen).toEqual([1, 2, 3, 4])
  })

  it('retry: 1 (or { attempts: 1 }) means a single attempt', async () => {
    const { runtime, retries } = setup()
    const a = run(runtime, failing(1), { retry: 1 })
    const b = run(runtime, failing(1), { retry: { attempts: 1, delay: 5 } })
    expect((await settle(a)).status).toBe('error')
    expect((await settle(b)).status).toBe('error')
    expect([...retries(a), ...retries(b)]).toEqual([])
  })

  it('a retried attempt queues behind work that arrived meanwhile (FIFO within a priority)', async () => {
    const { runtime, clock } = setup({ concurrency: 1 })
    const order: string[] = []
    const flaky = run(
      runtime,
      async (ctx) => {
        order.push(`flaky ${ctx.attempt}`)
        if (ctx.attempt === 1) throw new Error('flaky')
      },
      { retry: { attempts: 2, delay: 10 } },
    )
    await flush()
    const other = run(runtime, async (ctx) => {
      order.push('other')
      await ctx.sleep(100)
    })
    expect(other.state).toBe('running')
    await clock.advance(10)
    expect(flaky.state).toBe('queued')
    await clock.advance(90)
    expect(order).toEqual(['flaky 1', 'other', 'flaky 2'])
    expect(flaky.state).toBe('success')
  })
})

describe('retry: delays', () => {
  it('the default delay is exponential, capped at 30 s, with full jitter from createRuntime({ random })', async () => {
    const draws: number[] = []
    const { runtime, clock, retries } = setup({
      random: () => {
        draws.push(draws.length)
        return 0.5
      },
    })
    const task = run(runtime, failing(12), { retry: 12 })
    await clock.runAll()
    expect((await settle(task)).status).toBe('error')
    // ceiling = min(30 000, 100·2^(n-1)); delay = floor(random() · ceiling)
    expect(retries(task).map((r) => r.delay)).toEqual([
      50, 100, 200, 400, 800, 1_600, 3_200, 6_400, 12_800, 15_000, 15_000,
    ])
    expect(draws).toHaveLength(11)
  })

  it('jitter spreads the delay over [0, ceiling): random() = 0 retries at once, 0.999 just under the ceiling', async () => {
    const low = setup({ random: () => 0 })
    const high = setup({ random: () => 0.999 })
    const a = run(low.runtime, failing(3), { retry: 4 })
    const b = run(high.runtime, failing(3), { retry: 4 })
    await low.clock.runAll()
    await high.clock.runAll()
    expect(low.retries(a).map((r) => r.delay)).toEqual([0, 0, 0])
    expect(high.retries(b).map((r) => r.delay)).toEqual([99, 199, 399])
    expect(high.clock.now()).toBe(99 + 199 + 399)
  })

  it('a number delay waits exactly that long between attempts', async () => {
    const { runtime, clock, transitions } = setup()
    const task = run(runtime, failing(2), { retry: { attempts: 3, delay: 250 } })
    await clock.advance(500)
    expect(await task).toBe('ok on 3')
    expect(transitions(task).filter((t) => t.startsWith('parked:retry>'))).toEqual([
      'parked:retry>queued@250',
      'parked:retry>queued@500',
    ])
  })

  it('a delay function receives (attempt, error) and its result is the wait', async () => {
    const { runtime, clock, retries } = setup()
    const calls: Array<[number, string]> = []
    const task = run(runtime, failing(3), {
      retry: {
        attempts: 4,
        delay: (attempt, error) => {
          calls.push([attempt, (error as Error).message])
          return attempt * 1_000
        },
      },
    })
    await clock.advance(6_000)
    expect(await task).toBe('ok on 4')
    expect(calls).toEqual([
      [1, 'fail 1'],
      [2, 'fail 2'],
      [3, 'fail 3'],
    ])
    expect(retries(task).map((r) => [r.delay, r.at])).toEqual([
      [1_000, 0],
      [2_000, 1_000],
      [3_000, 3_000],
    ])
  })
})

describe('retry: which errors are retried', () => {
  it('retryIf receives (error, attempt); false ends the task with that error', async () => {
    const { runtime, clock, retries } = setup({ random: () => 0 })
    const calls: Array<[string, number]> = []
    class Fatal extends Error {}
    const task = run(
      runtime,
      (ctx) => {
        throw ctx.attempt === 1 ? new Error('transient') : new Fatal('fatal')
      },
      {
        retry: {
          attempts: 5,
          retryIf: (error, attempt) => {
            calls.push([(error as Error).message, attempt])
            return !(error instanceof Fatal)
          },
        },
      },
    )
    await clock.runAll()
    const outcome = await settle(task)
    expect(outcome.status === 'error' && outcome.error).toBeInstanceOf(Fatal)
    expect(calls).toEqual([
      ['transient', 1],
      ['fatal', 2],
    ])
    expect(retries(task)).toHaveLength(1)
    expect(task.attempt).toBe(2)
  })

  it('retryIf is not asked after the last attempt', async () => {
    const { runtime, clock } = setup({ random: () => 0 })
    let asked = 0
    const task = run(runtime, failing(9), {
      retry: {
        attempts: 2,
        retryIf: () => {
          asked++
          return true
        },
      },
    })
    await clock.runAll()
    expect((await settle(task)).status).toBe('error')
    expect(asked).toBe(1)
  })

  it('cancelling a task that waits in parked:retry ends it at once: no further attempt, no timer left', async () => {
    const { runtime, clock, transitions } = setup()
    const attempts: number[] = []
    const task = run(runtime, failing(5, attempts), { retry: { attempts: 5, delay: 1_000 } })
    await flush()
    expect(task.state).toBe('parked:retry')
    task.cancel()
    expect(task.state).toBe('cancelled')
    expect(task.cancelReason).toBe('abort')
    expect(clock.pending).toBe(0)
    await clock.advance(10_000)
    expect(attempts).toEqual([1])
    expect(transitions(task)).toEqual([
      'idle>queued@0',
      'queued>running@0',
      'running>parked:retry@0',
      'parked:retry>cancelled(abort)@0',
    ])
    await expect(task).rejects.toMatchObject({ name: 'CancelledError', reason: 'abort' })
  })

  it('cancelling a running attempt is never retried, even with attempts left and retryIf () => true', async () => {
    const { runtime, clock, retries, events } = setup()
    const attempts: number[] = []
    const task = run(
      runtime,
      async (ctx) => {
        attempts.push(ctx.attempt)
        await ctx.sleep(100)
      },
      { retry: { attempts: 5, delay: 0, retryIf: () => true } },
    )
    await clock.advance(10)
    task.cancel()
    await clock.advance(1_000)
    expect(attempts).toEqual([1])
    expect(retries(task)).toEqual([])
    expect(task.cancelReason).toBe('abort')
    // The aborted body left at its cancellation point: task:exited, threw an AbortError.
    const exited = events.filter((e) => e.type === 'task:exited')
    expect(exited.map((e) => e.taskId)).toEqual([task.id])
    expect(((exited[0] as { threw?: unknown }).threw as DOMException).name).toBe('AbortError')
  })

  it('a body that throws a CancelledError itself is not retried: the task ends in error with it', async () => {
    const { runtime, clock, retries } = setup()
    const attempts: number[] = []
    const task = run(
      runtime,
      async (ctx) => {
        attempts.push(ctx.attempt)
        // e.g. awaiting a task that someone else cancelled
        const other = run(runtime, (c) => c.sleep(10))
        other.cancel()
        await other
      },
      { retry: { attempts: 3, delay: 0, retryIf: () => true } },
    )
    await clock.runAll()
    const outcome = await settle(task)
    expect(outcome.status).toBe('error')
    expect(outcome.status === 'error' && outcome.error).toBeInstanceOf(CancelledError)
    expect(task.cancelReason).toBeUndefined()
    expect(attempts).toEqual([1])
    expect(retries(task)).toEqual([])
  })

  it('the random source is only drawn for default delays', async () => {
    let draws = 0
    const { runtime, clock } = setup({
      random: () => {
        draws++
        return 0.5
      },
    })
    const task = run(runtime, failing(2), { retry: { attempts: 3, delay: 5 } })
    await clock.advance(10)
    expect(await task).toBe('ok on 3')
    expect(draws).toBe(0)
  })
})

describe('retry: a broken policy fails the task instead of hanging it', () => {
  it('a delay function that returns NaN or a negative number ends the task in error with a RangeError', async () => {
    const { runtime } = setup({ concurrency: 1 })
    for (const bad of [Number.NaN, -5, Number.POSITIVE_INFINITY]) {
      const task = run(runtime, failing(1), { retry: { attempts: 3, delay: () => bad } })
      const outcome = await settle(task)
      expect(outcome.status).toBe('error')
      const error = outcome.status === 'error' ? (outcome.error as Error) : undefined
      expect(error).toBeInstanceOf(RangeError)
      expect(error?.message).toBe(
        `retry.delay(attempt, error) must be a finite number of milliseconds ≥ 0, got ${bad}.`,
      )
    }
    // The one slot came back every time, and nothing is left.
    expect(inspect(runtime).sizes).toMatchObject({ liveTasks: 0, slotsInUse: 0, runningBodies: 0 })
    expect(await run(runtime, () => 'still usable')).toBe('still usable')
  })

  it('a retryIf that throws ends the task with its error, even for a body that throws synchronously', async () => {
    const { runtime, transitions } = setup()
    const policyError = new Error('retryIf is broken')
    const task = run(
      runtime,
      () => {
        throw new Error('body')
      },
      {
        retry: {
          attempts: 3,
          retryIf: () => {
            throw policyError
          },
        },
      },
    )
    expect(task.state).toBe('error')
    expect(await settle(task)).toEqual({ status: 'error', error: policyError })
    expect(transitions(task)).toEqual(['idle>queued@0', 'queued>running@0', 'running>error@0'])
  })

  it('a random source outside [0, 1) is reported, not slept on', async () => {
    const { runtime } = setup({ random: () => Number.NaN })
    const outcome = await settle(run(runtime, failing(1), { retry: 2 }))
    expect(outcome.status === 'error' && (outcome.error as Error).message).toBe(
      'The default retry delay (is createRuntime({ random }) returning a number in [0, 1)?) must be a finite number of milliseconds ≥ 0, got NaN.',
    )
  })
})

describe('two attempts of one task never overlap', () => {
  it('a retry does not start while the timed-out attempt is still inside (measured inside the body)', async () => {
    const clock = createTestClock()
    const runtime = createRuntime({ clock })
    let inside = 0
    let most = 0
    const task = run(
      runtime,
      async () => {
        most = Math.max(most, ++inside)
        try {
          await new Promise<void>((resolve) => clock.setTimeout(resolve, 40))
        } finally {
          inside--
        }
      },
      { timeout: { attempt: 10 }, retry: { attempts: 3, delay: 0 } },
    )
    const outcome = settle(task)
    await clock.runAll()
    expect(most).toBe(1)
    expect(await outcome).toMatchObject({ status: 'error' })
    expect(task.attempt).toBe(3)
  })

  it('a task cancelled while its retry waits for the timed-out body ends at once and never starts again', async () => {
    const clock = createTestClock()
    const runtime = createRuntime({ clock })
    const hold = gate()
    let starts = 0
    const task = run(
      runtime,
      () => {
        starts++
        return hold.promise
      },
      { timeout: { attempt: 10 }, retry: { attempts: 2, delay: 1 } },
    )
    await clock.advance(11)
    expect(task.state).toBe('parked:retry')
    task.cancel()
    hold.open()
    await flush()
    expect([task.state, starts]).toEqual(['cancelled', 1])
    expect(inspect(runtime).sizes).toMatchObject({ liveTasks: 0, runningBodies: 0, slotsInUse: 0 })
  })
})
