import { AsyncLocalStorage } from 'node:async_hooks'
import { describe, expect, it } from 'vitest'
import {
  type AttemptWrapper,
  createRuntime,
  createTaskTag,
  createTestClock,
  debounce,
  inspect,
  type Plugin,
  run,
  settle,
  tagTaskFn,
  withShaper,
  wrapAttempts,
} from '../src/index.js'
import { flush, gate } from './helpers.js'

// The caller's context (set around run()) and the wrapper's context (set
// around the body by the wrapper) are two stores: a tracer reads the first
// in the wrapper to find its parent and sets the second for the body.
const caller = new AsyncLocalStorage<string>()
const attempt = new AsyncLocalStorage<string>()

/** A wrapper that records the caller context it was called in and labels the body's context. */
function labelling(seenByWrapper: string[]): AttemptWrapper {
  return (info, enter) => {
    seenByWrapper.push(`${info.task.id}/${info.attempt}:${caller.getStore() ?? 'none'}`)
    return attempt.run(`${caller.getStore() ?? 'none'}#${info.task.id}.${info.attempt}`, enter)
  }
}

/** A body that reports the wrapper's context after an await (so the context survives async steps). */
const reportsAttempt = async (): Promise<string> => {
  await Promise.resolve()
  return attempt.getStore() ?? 'unwrapped'
}

describe('wrapAttempts: one seam around each attempt', () => {
  it('wraps a body that starts at once, in its caller context', async () => {
    const runtime = createRuntime()
    const wrapperSaw: string[] = []
    wrapAttempts(runtime, labelling(wrapperSaw))
    const task = caller.run('req-1', () => run(runtime, reportsAttempt))
    expect(await task).toBe('req-1#1.1')
    expect(wrapperSaw).toEqual(['1/1:req-1'])
  })

  it('a body that waited in the queue gets the wrapper in its own caller context', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const wrapperSaw: string[] = []
    wrapAttempts(runtime, labelling(wrapperSaw))
    const hold = gate()
    caller.run('blocker', () => run(runtime, () => hold.promise))
    const waiting = ['req-a', 'req-b'].map((id) =>
      caller.run(id, () => run(runtime, reportsAttempt)),
    )
    caller.run('releaser', () => hold.open())
    expect(await Promise.all(waiting)).toEqual(['req-a#2.1', 'req-b#3.1'])
    expect(wrapperSaw).toEqual(['1/1:blocker', '2/1:req-a', '3/1:req-b'])
  })

  it('behind dependencies, a coordinator-like handler and a shaper, the wrapper sees each caller context', async () => {
    const clock = createTestClock()
    const tag = createTaskTag<null>('installParker')
    const parked: Array<() => void> = []
    const parker: Plugin = {
      name: 'installParker',
      install: (host) =>
        host.claim(tag, (request) => {
          request.park()
          return new Promise((resolve) => parked.push(() => resolve(request.proceed())))
        }),
    }
    const runtime = createRuntime({ clock, plugins: [parker] })
    const wrapperSaw: string[] = []
    wrapAttempts(runtime, labelling(wrapperSaw))
    const hold = gate()
    const dependency = caller.run('dependency', () => run(runtime, () => hold.promise))
    const dependent = caller.run('dependent', () =>
      run(runtime, reportsAttempt, { dependsOn: [dependency] }),
    )
    const coordinated = caller.run('coordinated', () =>
      run(runtime, tagTaskFn(reportsAttempt, tag, null)),
    )
    const search = withShaper(reportsAttempt, debounce(50), { key: 'search' })
    caller.run('keystroke-1', () => run(runtime, search))
    const survivor = caller.run('keystroke-2', () => run(runtime, search))
    caller.run('elsewhere', () => {
      hold.open()
      for (const release of parked) release()
    })
    await caller.run('timer', () => clock.advance(50))
    expect(await dependent).toBe(`dependent#${dependent.id}.1`)
    expect(await coordinated).toBe(`coordinated#${coordinated.id}.1`)
    expect(await survivor).toBe(`keystroke-2#${survivor.id}.1`)
    expect(wrapperSaw).toContain(`${dependent.id}/1:dependent`)
    expect(wrapperSaw).toContain(`${coordinated.id}/1:coordinated`)
    expect(wrapperSaw).toContain(`${survivor.id}/1:keystroke-2`)
  })

  it('wraps every retry, with its attempt number', async () => {
    const clock = createTestClock()
    const runtime = createRuntime({ clock })
    const wrapperSaw: string[] = []
    wrapAttempts(runtime, labelling(wrapperSaw))
    const bodySaw: string[] = []
    const task = caller.run('req-retry', () =>
      run(
        runtime,
        async (ctx) => {
          await Promise.resolve()
          bodySaw.push(attempt.getStore() ?? 'unwrapped')
          if (ctx.attempt < 3) throw new Error('again')
          return 'done'
        },
        { retry: { attempts: 3, delay: 10 } },
      ),
    )
    await caller.run('clock', () => clock.advance(10))
    await caller.run('clock', () => clock.advance(10))
    expect(await task).toBe('done')
    expect(bodySaw).toEqual(['req-retry#1.1', 'req-retry#1.2', 'req-retry#1.3'])
    expect(wrapperSaw).toEqual(['1/1:req-retry', '1/2:req-retry', '1/3:req-retry'])
  })

  it('two wrappers nest: the one installed first is outer', async () => {
    const runtime = createRuntime()
    const order: string[] = []
    wrapAttempts(runtime, (_info, enter) => {
      order.push('outer in')
      const result = enter()
      order.push('outer out')
      return result
    })
    wrapAttempts(runtime, (_info, enter) => {
      order.push('inner in')
      const result = enter()
      order.push('inner out')
      return result
    })
    await run(runtime, () => {
      order.push('body')
    })
    expect(order).toEqual(['outer in', 'inner in', 'body', 'inner out', 'outer out'])
  })

  it('works on a runtime that already has queued tasks, and is removed without a trace', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const hold = gate()
    const blocker = run(runtime, () => hold.promise)
    const queued = run(runtime, reportsAttempt)
    const unwrap = wrapAttempts(runtime, (info, enter) =>
      attempt.run(`late #${info.task.id}`, enter),
    )
    expect(inspect(runtime).sizes.attemptWrappers).toBe(1)
    hold.open()
    await blocker
    expect(await queued).toBe(`late #${queued.id}`)
    unwrap()
    unwrap()
    expect(await run(runtime, reportsAttempt)).toBe('unwrapped')
    expect(inspect(runtime).sizes).toEqual({
      liveTasks: 0,
      queued: 0,
      slotsInUse: 0,
      runningBodies: 0,
      shaperWindows: 0,
      listeners: 0,
      attemptWrappers: 0,
    })
  })

  it('removing one of two wrappers keeps the other', async () => {
    const runtime = createRuntime()
    const order: string[] = []
    const recording =
      (name: string): AttemptWrapper =>
      (_info, enter) => {
        order.push(name)
        return enter()
      }
    const first = wrapAttempts(runtime, recording('first'))
    wrapAttempts(runtime, recording('second'))
    first()
    await run(runtime, () => {})
    expect(order).toEqual(['second'])
    expect(inspect(runtime).sizes.attemptWrappers).toBe(1)
  })

  it("the body's outcome is what enter() produced, whatever the wrapper returns", async () => {
    const runtime = createRuntime()
    wrapAttempts(runtime, (_info, enter) => {
      enter()
      return 'the wrapper’s own value'
    })
    expect(await run(runtime, async () => 'body value')).toBe('body value')
    const failing = run(runtime, () => {
      throw new RangeError('body threw')
    })
    await expect(failing).rejects.toThrow(RangeError)
  })

  it('a wrapper that rethrows the body’s error leaves that error as the outcome', async () => {
    const runtime = createRuntime()
    const seen: unknown[] = []
    wrapAttempts(runtime, (_info, enter) => {
      try {
        return enter()
      } catch (error) {
        seen.push(error)
        throw error
      }
    })
    const error = new Error('from the body')
    const outcome = await settle(
      run(runtime, () => {
        throw error
      }),
    )
    expect(outcome).toEqual({ status: 'error', error })
    expect(seen).toEqual([error])
  })

  it('a wrapper that never calls enter() fails the attempt with a TypeError; the body never runs', async () => {
    const runtime = createRuntime()
    let ran = false
    wrapAttempts(runtime, () => undefined)
    const outcome = await settle(
      run(runtime, () => {
        ran = true
      }),
    )
    expect(ran).toBe(false)
    expect(outcome.status).toBe('error')
    const error = (outcome as { error: Error }).error
    expect(error).toBeInstanceOf(TypeError)
    expect(error.message).toMatch(/without calling enter\(\) for task #1, attempt 1/)
    expect(inspect(runtime).sizes).toMatchObject({ runningBodies: 0, slotsInUse: 0, liveTasks: 0 })
  })

  it('a wrapper that calls enter() twice gets a TypeError from the second call; the body runs once', async () => {
    const runtime = createRuntime()
    let runs = 0
    let second: unknown
    wrapAttempts(runtime, (_info, enter) => {
      const result = enter()
      try {
        enter()
      } catch (error) {
        second = error
      }
      return result
    })
    expect(await run(runtime, () => ++runs)).toBe(1)
    expect(runs).toBe(1)
    expect(second).toBeInstanceOf(TypeError)
  })

  it('a wrapper that throws before enter() fails the attempt with its error, and a retry still applies', async () => {
    const runtime = createRuntime()
    const broken = new Error('wrapper broke')
    let calls = 0
    wrapAttempts(runtime, (_info, enter) => {
      calls++
      if (calls === 1) throw broken
      return enter()
    })
    const task = run(runtime, (ctx) => ctx.attempt, { retry: { attempts: 2, delay: 0 } })
    expect(await task).toBe(2)
    expect(calls).toBe(2)
    calls = 0
    const once = run(runtime, () => 'never')
    expect(await settle(once)).toEqual({ status: 'error', error: broken })
  })

  it('a wrapper that throws after enter() fails the attempt with its error once the body has left', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const broken = new Error('wrapper broke after')
    wrapAttempts(runtime, (_info, enter) => {
      enter()
      throw broken
    })
    const hold = gate()
    let exited = false
    const task = run(runtime, async () => {
      await hold.promise
      exited = true
      return 'body value'
    })
    await flush()
    expect(task.state).toBe('running')
    expect(inspect(runtime).sizes.slotsInUse).toBe(1)
    hold.open()
    expect(await settle(task)).toEqual({ status: 'error', error: broken })
    expect(exited).toBe(true)
    expect(inspect(runtime).sizes).toMatchObject({ runningBodies: 0, slotsInUse: 0 })
  })

  it('refuses a wrapper that is not a function, and a value that is not a runtime', () => {
    const runtime = createRuntime()
    expect(() => wrapAttempts(runtime, 'trace' as never)).toThrow(
      /wrapAttempts\(runtime, wrapper\): wrapper must be a function .* got 'trace'/,
    )
    expect(() => wrapAttempts({} as never, () => undefined)).toThrow(TypeError)
  })
})
