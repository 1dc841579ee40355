import { describe, expect, it } from 'vitest'
import {
  type Clock,
  createPriorityBackend,
  createRuntime,
  createTestClock,
  run,
  type TestClock,
} from '../src/index.js'

describe('createTestClock', () => {
  it('starts at 0, or at the given time, and only moves when told to', async () => {
    expect(createTestClock().now()).toBe(0)
    const clock = createTestClock({ now: 1_700_000_000_000 })
    expect(clock.now()).toBe(1_700_000_000_000)
    await new Promise((resolve) => setImmediate(resolve))
    expect(clock.now()).toBe(1_700_000_000_000)
    await clock.advance(250)
    expect(clock.now()).toBe(1_700_000_000_250)
  })

  it('advance fires due timers in time order, ties in the order they were set, with now() at their due time', async () => {
    const clock = createTestClock()
    const fired: string[] = []
    clock.setTimeout(() => fired.push(`c@${clock.now()}`), 30)
    clock.setTimeout(() => fired.push(`a@${clock.now()}`), 10)
    clock.setTimeout(() => fired.push(`b1@${clock.now()}`), 20)
    clock.setTimeout(() => fired.push(`b2@${clock.now()}`), 20)
    clock.setTimeout(() => fired.push(`late@${clock.now()}`), 31)
    expect(clock.pending).toBe(5)
    await clock.advance(30)
    expect(fired).toEqual(['a@10', 'b1@20', 'b2@20', 'c@30'])
    expect(clock.now()).toBe(30)
    expect(clock.pending).toBe(1)
    await clock.advance(1)
    expect(fired.at(-1)).toBe('late@31')
    expect(clock.pending).toBe(0)
  })

  it('timers set by timers fire within the same advance when they fall inside it', async () => {
    const clock = createTestClock()
    const fired: number[] = []
    const tick = () => {
      fired.push(clock.now())
      clock.setTimeout(tick, 10)
    }
    clock.setTimeout(tick, 10)
    await clock.advance(35)
    expect(fired).toEqual([10, 20, 30])
    expect(clock.pending).toBe(1)
    expect(clock.now()).toBe(35)
  })

  it('a zero, negative or NaN delay fires at the current time on the next advance, like the platform', async () => {
    const clock = createTestClock({ now: 100 })
    const fired: string[] = []
    clock.setTimeout(() => fired.push(`zero@${clock.now()}`), 0)
    clock.setTimeout(() => fired.push(`negative@${clock.now()}`), -50)
    clock.setTimeout(() => fired.push(`nan@${clock.now()}`), Number.NaN)
    expect(fired).toEqual([])
    await clock.advance(0)
    expect(fired).toEqual(['zero@100', 'negative@100', 'nan@100'])
    expect(clock.now()).toBe(100)
  })

  it('clearTimeout cancels a pending timer; clearing twice or clearing a fired timer is harmless', async () => {
    const clock = createTestClock()
    const fired: string[] = []
    const keep = clock.setTimeout(() => fired.push('keep'), 10)
    const drop = clock.setTimeout(() => fired.push('drop'), 10)
    clock.clearTimeout(drop)
    clock.clearTimeout(drop)
    expect(clock.pending).toBe(1)
    await clock.advance(10)
    clock.clearTimeout(keep)
    expect(fired).toEqual(['keep'])
    expect(clock.pending).toBe(0)
  })

  it('promise callbacks run between timers, so async code sees each step at its own time', async () => {
    const clock = createTestClock()
    const log: string[] = []
    const wait = (ms: number) => new Promise<void>((resolve) => clock.setTimeout(resolve, ms))
    const flow = (async () => {
      await wait(10)
      log.push(`step 1 @${clock.now()}`)
      await wait(10)
      log.push(`step 2 @${clock.now()}`)
      return 'done'
    })()
    await clock.advance(25)
    expect(log).toEqual(['step 1 @10', 'step 2 @20'])
    expect(await flow).toBe('done')
  })

  it('runAll fires everything, including timers set along the way, and moves now() to the last one', async () => {
    const clock = createTestClock()
    const fired: number[] = []
    clock.setTimeout(() => {
      fired.push(clock.now())
      clock.setTimeout(() => fired.push(clock.now()), 1_000)
    }, 500)
    await clock.runAll()
    expect(fired).toEqual([500, 1_500])
    expect(clock.now()).toBe(1_500)
    expect(clock.pending).toBe(0)
  })

  it('runAll stops with a RangeError when a timer keeps rescheduling itself', async () => {
    const clock = createTestClock()
    let count = 0
    const forever = () => {
      count++
      clock.setTimeout(forever, 1)
    }
    clock.setTimeout(forever, 1)
    await expect(clock.runAll(50)).rejects.toThrow(
      new RangeError('clock.runAll(): still 1 timers after 50; a timer keeps rescheduling itself.'),
    )
    expect(count).toBe(50)
  })

  it('rejects a bad advance and a bad start time with a RangeError', async () => {
    const clock = createTestClock()
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(clock.advance(bad)).rejects.toThrow(
        new RangeError(`clock.advance(ms): ms must be a finite number ≥ 0, got ${bad}.`),
      )
    }
    expect(clock.now()).toBe(0)
    expect(() => createTestClock({ now: Number.NaN })).toThrow(
      new RangeError('createTestClock({ now }): now must be a finite number, got NaN.'),
    )
    expect(() => createTestClock({ start: 5 } as never)).toThrow(
      /^createTestClock\(options\): unknown option 'start'\. Known options: 'now'\./,
    )
    expect(() => createPriorityBackend({ concurency: 2 } as never)).toThrow(
      /^createPriorityBackend\(options\): unknown option 'concurency'; did you mean 'concurrency'\?/,
    )
  })

  it('stays fast with many timers: 100 000 timers, half cleared, fire in order', async () => {
    const clock = createTestClock()
    const fired: number[] = []
    const handles: unknown[] = []
    for (let i = 0; i < 100_000; i++) {
      const due = (i * 7919) % 100_000
      handles.push(clock.setTimeout(() => fired.push(due), due))
    }
    for (let i = 0; i < 100_000; i += 2) clock.clearTimeout(handles[i])
    expect(clock.pending).toBe(50_000)
    await clock.advance(100_000)
    expect(fired).toHaveLength(50_000)
    expect(fired.every((due, i) => i === 0 || fired[i - 1]! <= due)).toBe(true)
    expect(clock.pending).toBe(0)
  }, 30_000)
})

describe('the test clock for the user’s own code', () => {
  // Code under test takes a Clock, as the kernel does; production passes systemClock.
  function poll(clock: Clock, check: () => boolean, every: number): Promise<number> {
    const started = clock.now()
    return new Promise((resolve) => {
      const tick = () => {
        if (check()) resolve(clock.now() - started)
        else clock.setTimeout(tick, every)
      }
      tick()
    })
  }

  it('drives a user’s polling loop on fake time', async () => {
    const clock: TestClock = createTestClock()
    let ready = false
    const waited = poll(clock, () => ready, 100)
    await clock.advance(250)
    ready = true
    await clock.advance(50)
    expect(await waited).toBe(300)
  })

  it('the same clock drives the runtime: ctx.sleep, retry delays and timeouts share one timeline', async () => {
    const clock = createTestClock()
    const runtime = createRuntime({ clock })
    const log: string[] = []
    clock.setTimeout(() => log.push(`user timer @${clock.now()}`), 150)
    const task = run(
      runtime,
      async (ctx) => {
        log.push(`attempt ${ctx.attempt} @${clock.now()}`)
        await ctx.sleep(100)
        if (ctx.attempt === 1) throw new Error('again')
        return clock.now()
      },
      { retry: { attempts: 2, delay: 100 } },
    )
    await clock.advance(300)
    expect(await task).toBe(300)
    expect(log).toEqual(['attempt 1 @0', 'user timer @150', 'attempt 2 @200'])
  })

  it('ctx.sleep resolves exactly at its due time, not before', async () => {
    const clock = createTestClock()
    const runtime = createRuntime({ clock })
    const task = run(runtime, (ctx) => ctx.sleep(1_000).then(() => 'woke'))
    await clock.advance(999)
    expect(task.state).toBe('running')
    await clock.advance(1)
    expect(await task).toBe('woke')
    expect(clock.pending).toBe(0)
  })
})
