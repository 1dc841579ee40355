import { describe, expect, it } from 'vitest'
import {
  CancelledError,
  type Clock,
  createRuntime,
  createTaskTag,
  createTestClock,
  debounce,
  hashKey,
  inspect,
  type Plugin,
  type RuntimeOptions,
  run,
  type Shaper,
  settle,
  type Task,
  type TaskContext,
  tagTaskFn,
  throttle,
  withShaper,
} from '../src/index.js'
import { flush, recordedRuntime } from './helpers.js'

const _macrotask = flush

function setup(options: Omit<RuntimeOptions, 'clock'> = {}) {
  const { clock, runtime, events, timeline: transitions } = recordedRuntime(options)
  /** `[taskId, clock time]` of every body start, in order. */
  const starts: Array<[number, number]> = []
  const body = (ctx: TaskContext) => {
    starts.push([ctx.taskId, clock.now()])
    return `result of #${ctx.taskId}`
  }
  /** Advances the clock to `at` (a Task is a thenable, so this never returns one). */
  const to = (at: number) => clock.advance(at - clock.now())
  return { clock, runtime, events, transitions, starts, body, to }
}

const windows = (runtime: Parameters<typeof inspect>[0]) => inspect(runtime).sizes.shaperWindows

describe('debounce (trailing)', () => {
  it('merges calls less than ms apart; the last is dispatched ms after it; the others are superseded by the next call', async () => {
    const { runtime, clock, events, transitions, starts, body, to } = setup()
    const search = withShaper(body, debounce(300), { key: 'q' })
    await to(0)
    const a = run(runtime, search)
    await to(100)
    const b = run(runtime, search)
    await to(200)
    const c = run(runtime, search)
    expect([a.state, b.state, c.state]).toEqual(['cancelled', 'cancelled', 'parked:shaper'])
    expect([a.cancelReason, b.cancelReason]).toEqual(['superseded', 'superseded'])
    expect([a.cancelledBy, b.cancelledBy, c.cancelledBy]).toEqual([b.id, c.id, undefined])
    expect(windows(runtime)).toBe(1)
    await clock.advance(299)
    expect(starts).toEqual([])
    await clock.advance(1)
    expect(starts).toEqual([[c.id, 500]])
    // Every caller gets the survivor's result.
    expect(await Promise.all([a, b, c])).toEqual([
      `result of #${c.id}`,
      `result of #${c.id}`,
      `result of #${c.id}`,
    ])
    expect(transitions(a)).toEqual([
      'idle>parked:shaper@0',
      'parked:shaper>cancelled(superseded)@100',
    ])
    expect(transitions(c)).toEqual([
      'idle>parked:shaper@200',
      'parked:shaper>idle@500',
      'idle>queued@500',
      'queued>running@500',
      'running>success@500',
    ])
    const cancelEvent = events.find(
      (e) => e.type === 'task:transition' && e.taskId === a.id && e.to === 'cancelled',
    )
    expect(cancelEvent).toMatchObject({ reason: 'superseded', cancelledBy: b.id })
    expect(events.find((e) => e.type === 'task:created' && e.taskId === a.id)).toMatchObject({
      key: hashKey('q'),
    })
    // The task's own fate stays its own: settle says cancelled, the promise says the survivor's value.
    const outcome = await settle(a)
    expect(outcome.status).toBe('cancelled')
    expect(outcome.status === 'cancelled' && outcome.error).toBeInstanceOf(CancelledError)
    expect(outcome.status === 'cancelled' && outcome.error.cancelledBy).toBe(b.id)
    expect(windows(runtime)).toBe(0)
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
    expect(clock.pending).toBe(0)
  })

  it('a caller who awaits a merged call early still gets the survivor’s result', async () => {
    const { runtime, clock, body } = setup()
    const shaped = withShaper(body, debounce(50), { key: 'q' })
    const first = run(runtime, shaped)
    const firstResult = first.then((v) => v)
    await clock.advance(10)
    const second = run(runtime, shaped)
    await clock.advance(50)
    expect(await firstResult).toBe(`result of #${second.id}`)
  })

  it('different keys never merge; the same key after a window closed opens a new one', async () => {
    const { runtime, clock, starts, body } = setup()
    const shaper = debounce(100)
    const forA = withShaper(body, shaper, { key: ['user', 'a'] })
    const forB = withShaper(body, shaper, { key: ['user', 'b'] })
    const a1 = run(runtime, forA)
    const b1 = run(runtime, forB)
    expect(windows(runtime)).toBe(2)
    await clock.advance(100)
    expect(starts).toEqual([
      [a1.id, 100],
      [b1.id, 100],
    ])
    expect(windows(runtime)).toBe(0)
    const a2 = run(runtime, forA)
    expect(a2.state).toBe('parked:shaper')
    await clock.advance(100)
    expect(starts.at(-1)).toEqual([a2.id, 200])
  })

  it('a burst arms one timer per window, not one per call; one that fires early waits for the rest', async () => {
    const clock = createTestClock()
    let armed = 0
    const counting: Clock = {
      now: () => clock.now(),
      setTimeout: (callback, ms) => {
        armed++
        return clock.setTimeout(callback, ms)
      },
      clearTimeout: (handle) => clock.clearTimeout(handle),
    }
    const runtime = createRuntime({ clock: counting })
    const starts: Array<[number, number]> = []
    const search = withShaper(
      (ctx: TaskContext) => {
        starts.push([ctx.taskId, clock.now()])
      },
      debounce(100),
      { key: 'q' },
    )
    for (let i = 0; i < 1_000; i++) run(runtime, search)
    expect(armed).toBe(1)
    await clock.advance(60)
    const last = run(runtime, search)
    // Armed for 100, the window's timer finds the end moved to 160: one more timer, for the rest.
    await clock.advance(40)
    expect(starts).toEqual([])
    expect(armed).toBe(2)
    await clock.advance(59)
    expect(starts).toEqual([])
    await clock.advance(1)
    expect(starts).toEqual([[last.id, 160]])
    expect(armed).toBe(2)
  })

  it('a survivor that fails rejects every merged caller with the same error, and nothing goes unhandled', async () => {
    const { runtime, clock } = setup()
    const boom = new Error('search failed')
    const shaped = withShaper(
      () => {
        throw boom
      },
      debounce(50),
      { key: 'q' },
    )
    // Nobody awaits these three: no unhandledRejection (checked after each test).
    run(runtime, shaped)
    run(runtime, shaped)
    const last = run(runtime, shaped)
    await clock.advance(50)
    expect(last.state).toBe('error')
    const awaited = [run(runtime, shaped), run(runtime, shaped)]
    await clock.advance(50)
    const results = await Promise.allSettled(awaited)
    expect(results).toEqual([
      { status: 'rejected', reason: boom },
      { status: 'rejected', reason: boom },
    ])
  })

  it('a survivor cancelled while parked takes its merged callers with it; the window stays open for later calls', async () => {
    const { runtime, clock, starts, body, transitions } = setup()
    const shaped = withShaper(body, debounce(100), { key: 'q' })
    const a = run(runtime, shaped)
    const b = run(runtime, shaped)
    b.cancel()
    expect(transitions(b)).toEqual(['idle>parked:shaper@0', 'parked:shaper>cancelled(abort)@0'])
    const error = await a.then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toMatchObject({ name: 'CancelledError', reason: 'abort', taskId: b.id })
    expect(windows(runtime)).toBe(1)
    await clock.advance(50)
    const c = run(runtime, shaped)
    await clock.advance(100)
    expect(starts).toEqual([[c.id, 150]])
    expect(a.cancelledBy).toBe(b.id)
  })

  it('an aborted RunOptions.signal frees the parked call; an empty window still closes and is dropped', async () => {
    const { runtime, clock, starts, body } = setup()
    const controller = new AbortController()
    const shaped = withShaper(body, debounce(100), { key: 'q' })
    const task = run(runtime, shaped, { signal: controller.signal })
    controller.abort(new Error('left the page'))
    expect(task.cancelReason).toBe('abort')
    await expect(task).rejects.toMatchObject({ reason: 'abort', cause: new Error('left the page') })
    expect(windows(runtime)).toBe(1)
    await clock.advance(100)
    expect(windows(runtime)).toBe(0)
    expect(starts).toEqual([])
  })

  it('a shaped call reads its dependencies only when its window releases it', async () => {
    const { runtime, clock, transitions, body } = setup()
    const dependency = run(runtime, (ctx) => ctx.sleep(150))
    const shaped = withShaper(body, debounce(100), { key: 'q' })
    const task = run(runtime, shaped, { dependsOn: [dependency] })
    await clock.advance(150)
    expect(await task).toBe(`result of #${task.id}`)
    expect(transitions(task)).toEqual([
      'idle>parked:shaper@0',
      'parked:shaper>idle@100',
      'idle>parked:dependencies@100',
      'parked:dependencies>queued@150',
      'queued>running@150',
      'running>success@150',
    ])
  })
})

describe('debounce with leading and maxWait', () => {
  it('leading: the first call runs at once; the last of the burst runs ms after it', async () => {
    const { runtime, clock, starts, body, to } = setup()
    const shaped = withShaper(body, debounce(300, { leading: true }), { key: 'q' })
    await to(0)
    const a = run(runtime, shaped)
    expect(starts).toEqual([[a.id, 0]])
    await to(100)
    const b = run(runtime, shaped)
    await to(200)
    const c = run(runtime, shaped)
    await clock.advance(300)
    expect(starts).toEqual([
      [a.id, 0],
      [c.id, 500],
    ])
    expect([a.state, b.state, c.state]).toEqual(['success', 'cancelled', 'success'])
    expect(b.cancelledBy).toBe(c.id)
    expect(await a).toBe(`result of #${a.id}`)
    expect(await b).toBe(`result of #${c.id}`)
    expect(windows(runtime)).toBe(0)
  })

  it('leading with a single call dispatches once, not again at the trailing edge', async () => {
    const { runtime, clock, starts, body } = setup()
    const shaped = withShaper(body, debounce(300, { leading: true }), { key: 'q' })
    const a = run(runtime, shaped)
    await clock.advance(1_000)
    expect(starts).toEqual([[a.id, 0]])
  })

  it('leading only: calls merged into the window are superseded by the leader and get its result; each call extends the window', async () => {
    const { runtime, clock, starts, body, to, transitions } = setup()
    const shaped = withShaper(body, debounce(300, { leading: true, trailing: false }), { key: 'q' })
    await to(0)
    const leader = run(runtime, shaped)
    await to(100)
    const b = run(runtime, shaped)
    await to(200)
    const c = run(runtime, shaped)
    expect([b.cancelledBy, c.cancelledBy]).toEqual([leader.id, leader.id])
    expect(transitions(b)).toEqual(['idle>cancelled(superseded)@100'])
    expect(await b).toBe(`result of #${leader.id}`)
    expect(await c).toBe(`result of #${leader.id}`)
    await clock.advance(299)
    expect(windows(runtime)).toBe(1)
    await clock.advance(1)
    expect(windows(runtime)).toBe(0)
    await to(600)
    const next = run(runtime, shaped)
    expect(starts).toEqual([
      [leader.id, 0],
      [next.id, 600],
    ])
  })

  it('maxWait bounds how long a steady stream of calls can postpone the trailing dispatch', async () => {
    const { runtime, clock, starts, body, to } = setup()
    const shaped = withShaper(body, debounce(100, { maxWait: 250 }), { key: 'q' })
    const calls: Task<unknown>[] = []
    for (const at of [0, 60, 120, 180, 240]) {
      await to(at)
      calls.push(run(runtime, shaped))
    }
    await clock.advance(10)
    expect(starts).toEqual([[calls[4]!.id, 250]])
    expect(windows(runtime)).toBe(0)
    // The next burst opens a new window with its own maxWait.
    for (const at of [300, 360]) {
      await to(at)
      calls.push(run(runtime, shaped))
    }
    await clock.advance(200)
    expect(starts).toEqual([
      [calls[4]!.id, 250],
      [calls[6]!.id, 460],
    ])
    expect(calls.map((t) => t.state)).toEqual([
      'cancelled',
      'cancelled',
      'cancelled',
      'cancelled',
      'success',
      'cancelled',
      'success',
    ])
  })

  it('leading with maxWait: the leader runs at once, the burst’s last call at maxWait', async () => {
    const { runtime, clock, starts, body, to } = setup()
    const shaped = withShaper(body, debounce(100, { leading: true, maxWait: 250 }), { key: 'q' })
    const calls: Task<unknown>[] = []
    for (const at of [0, 60, 120, 180, 240]) {
      await to(at)
      calls.push(run(runtime, shaped))
    }
    await clock.advance(10)
    expect(starts).toEqual([
      [calls[0]!.id, 0],
      [calls[4]!.id, 250],
    ])
    expect(windows(runtime)).toBe(0)
  })
})

describe('throttle', () => {
  it('leading + trailing: first call at once, last call of the window at its end, which opens the next window', async () => {
    const { runtime, clock, starts, body, to } = setup()
    const shaped = withShaper(body, throttle(100), { key: 'save' })
    await to(0)
    const a = run(runtime, shaped)
    await to(10)
    const b = run(runtime, shaped)
    await to(20)
    const c = run(runtime, shaped)
    expect(starts).toEqual([[a.id, 0]])
    expect(b.cancelledBy).toBe(c.id)
    // d falls in the window that c's trailing dispatch opened at 100: it waits for 200.
    await to(150)
    const d = run(runtime, shaped)
    expect(d.state).toBe('parked:shaper')
    await clock.advance(50)
    // That window closes empty at 300; f then opens a fresh window and runs at once.
    await clock.advance(100)
    expect(windows(runtime)).toBe(0)
    await to(350)
    const f = run(runtime, shaped)
    expect(starts).toEqual([
      [a.id, 0],
      [c.id, 100],
      [d.id, 200],
      [f.id, 350],
    ])
    expect(await b).toBe(`result of #${c.id}`)
    await clock.advance(100)
    expect(windows(runtime)).toBe(0)
    expect(clock.pending).toBe(0)
  })

  it('calls keep arriving: exactly one dispatch per window', async () => {
    const { runtime, clock, starts, body, to } = setup()
    const shaped = withShaper(body, throttle(100), { key: 'scroll' })
    for (let at = 0; at < 1_000; at += 10) {
      await to(at)
      run(runtime, shaped)
    }
    await clock.advance(100)
    expect(starts.map(([, at]) => at)).toEqual([
      0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1_000,
    ])
    await clock.advance(100)
    expect(windows(runtime)).toBe(0)
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
  })

  it('leading only: calls inside the window are superseded by the leader; the window does not extend', async () => {
    const { runtime, clock, starts, body, to } = setup()
    const shaped = withShaper(body, throttle(100, { trailing: false }), { key: 'k' })
    await to(0)
    const a = run(runtime, shaped)
    await to(50)
    const b = run(runtime, shaped)
    await to(99)
    const c = run(runtime, shaped)
    expect([b.cancelledBy, c.cancelledBy]).toEqual([a.id, a.id])
    expect(await c).toBe(`result of #${a.id}`)
    await to(100)
    const d = run(runtime, shaped)
    expect(starts).toEqual([
      [a.id, 0],
      [d.id, 100],
    ])
    await clock.advance(100)
    expect(windows(runtime)).toBe(0)
  })

  it('trailing only: the first call waits for the end of the window', async () => {
    const { runtime, clock, starts, body, to } = setup()
    const shaped = withShaper(body, throttle(100, { leading: false }), { key: 'k' })
    await to(0)
    const a = run(runtime, shaped)
    await to(30)
    const b = run(runtime, shaped)
    expect(starts).toEqual([])
    await clock.advance(70)
    expect(starts).toEqual([[b.id, 100]])
    expect(a.cancelledBy).toBe(b.id)
    await clock.advance(100)
    expect(windows(runtime)).toBe(0)
  })
})

describe('shapers and the rest of the pipeline', () => {
  it('merged calls never reach the dispatch seam: a plugin sees only the survivors', async () => {
    const seenByPlugin: number[] = []
    const countingTag = createTaskTag<{ name: string }>('countingPlugin')
    const countingPlugin: Plugin = {
      name: 'countingPlugin',
      install(host) {
        host.claim(countingTag, (request) => {
          seenByPlugin.push(request.task.id)
          return request.proceed()
        })
      },
    }
    const { runtime, clock, starts, body } = setup({ plugins: [countingPlugin] })
    const coordinated = tagTaskFn(withShaper(body, debounce(100), { key: 'q' }), countingTag, {
      name: 'search',
    })
    const calls = [run(runtime, coordinated), run(runtime, coordinated), run(runtime, coordinated)]
    expect(seenByPlugin).toEqual([])
    await clock.advance(100)
    expect(seenByPlugin).toEqual([calls[2]!.id])
    expect(starts).toEqual([[calls[2]!.id, 100]])
    expect(await Promise.all(calls)).toEqual(Array(3).fill(`result of #${calls[2]!.id}`))
  })

  it('a released survivor’s dispatch answer is what every merged caller gets, even when it is the survivor’s own promise', async () => {
    const answerTag = createTaskTag<{ mode: 'own' | 'value' }>('answerPlugin')
    const answerPlugin: Plugin = {
      name: 'answerPlugin',
      install(host) {
        host.claim(answerTag, (request) => {
          if (request.binding.mode === 'value') {
            request.skip('answered')
            return 'from the handler'
          }
          request.proceed()
          // While it is dispatched, the survivor's promise is its own, not the burst's.
          return request.task.promise
        })
      },
    }
    const { runtime, clock, body } = setup({ plugins: [answerPlugin] })
    const shaper = debounce(100)
    const bind = (mode: 'own' | 'value') =>
      tagTaskFn(withShaper(body, shaper, { key: mode }), answerTag, { mode })
    const own = [run(runtime, bind('own')), run(runtime, bind('own'))]
    const valued = [run(runtime, bind('value')), run(runtime, bind('value'))]
    await clock.advance(100)
    expect(await Promise.all(own)).toEqual(Array(2).fill(`result of #${own[1]!.id}`))
    expect(await Promise.all(valued)).toEqual(['from the handler', 'from the handler'])
    expect(await settle(valued[1]!)).toMatchObject({ status: 'cancelled', reason: 'answered' })
    expect(windows(runtime)).toBe(0)
  })

  it('a window belongs to a shaper value and a key: sharing both merges calls, a second shaper value does not', async () => {
    const { runtime, clock, starts, to } = setup()
    const shared: Shaper = debounce(100)
    const first = withShaper(() => 'first', shared, { key: 'k' })
    const second = withShaper(() => 'second', shared, { key: 'k' })
    const own = withShaper(() => 'own', debounce(100), { key: 'k' })
    await to(0)
    const a = run(runtime, first)
    await to(0)
    const b = run(runtime, second)
    await to(0)
    const c = run(runtime, own)
    expect(a.cancelledBy).toBe(b.id)
    expect(c.state).toBe('parked:shaper')
    await clock.advance(100)
    expect(await a).toBe('second')
    expect(await c).toBe('own')
    expect(starts).toEqual([])
  })
})

describe('per-key shaper state is dropped when its window closes', () => {
  it('100 000 distinct debounce keys leave nothing behind', async () => {
    const { clock, runtime } = setup()
    const shaper = debounce(10)
    let ran = 0
    const body = () => {
      ran++
    }
    for (let key = 0; key < 100_000; key++) run(runtime, withShaper(body, shaper, { key }))
    expect(inspect(runtime).sizes).toMatchObject({ shaperWindows: 100_000, liveTasks: 100_000 })
    await clock.advance(10)
    expect(ran).toBe(100_000)
    expect(inspect(runtime).sizes).toMatchObject({
      shaperWindows: 0,
      liveTasks: 0,
      runningBodies: 0,
      slotsInUse: 0,
      queued: 0,
    })
    expect(clock.pending).toBe(0)
  }, 60_000)

  it('throttle windows, including those a trailing dispatch opens, are dropped too', async () => {
    const { clock, runtime } = setup()
    const shaper = throttle(10)
    let ran = 0
    const body = () => {
      ran++
    }
    for (let key = 0; key < 10_000; key++) {
      const shaped = withShaper(body, shaper, { key: ['k', key] })
      run(runtime, shaped)
      run(runtime, shaped)
      run(runtime, shaped)
    }
    expect(ran).toBe(10_000)
    await clock.advance(10)
    // Each trailing dispatch opened a next window.
    expect(ran).toBe(20_000)
    expect(inspect(runtime).sizes.shaperWindows).toBe(10_000)
    await clock.advance(10)
    expect(inspect(runtime).sizes).toMatchObject({ shaperWindows: 0, liveTasks: 0 })
    expect(clock.pending).toBe(0)
  }, 60_000)
})
