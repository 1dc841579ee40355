import { isCancelledError, type Task, type TaskContext } from '@vega/job-core'
import { type UseTaskHandle, type UseTaskOptions, useTask } from '@vega/job-react'
import { startTransition, useEffect, version } from 'react'
import { describe, expect, it } from 'vitest'
import { advance, deferred, MODES, nextMacrotask, render, step, testRuntime } from './support.js'

type Handle = UseTaskHandle<[number], string>

/** Renders a useTask and hands every render's handle to the test. */
function Probe({
  fn,
  options,
  seen,
}: {
  fn: (ctx: TaskContext, n: number) => Promise<string>
  options?: UseTaskOptions<[number], string>
  seen: Handle[]
}) {
  const handle = useTask(fn, options)
  seen.push(handle)
  return (
    <output data-state={handle.state} data-running={handle.isRunning}>
      {handle.value ?? '-'}
    </output>
  )
}

/** Starts a task from its mount effect, as a data-loading component does. */
function Loader({ tasks, seen }: { tasks: Task<string>[]; seen: Handle[] }) {
  const load = useTask(sleepThen(() => 10))
  seen.push(load)
  useEffect(() => {
    tasks.push(load.run(7))
  }, [load, tasks])
  return <output>{load.value ?? '-'}</output>
}

/** Renders a useTask, then suspends on `until` when given: that render is never committed. */
function Suspending({
  fn,
  until,
  seen,
}: {
  fn: (ctx: TaskContext, n: number) => Promise<string>
  until: { promise: Promise<void>; done: boolean } | undefined
  seen: Handle[]
}) {
  const handle = useTask(fn)
  seen.push(handle)
  if (until !== undefined && !until.done) throw until.promise
  return <output>{handle.value ?? '-'}</output>
}

/** Calls run() while rendering, which must throw. */
function Eager({ errors }: { errors: unknown[] }) {
  const load = useTask(sleepThen(() => 10))
  try {
    load.run(1)
  } catch (error) {
    errors.push(error)
  }
  return null
}

const sleepThen = (ms: (n: number) => number) => async (ctx: TaskContext, n: number) => {
  await ctx.sleep(ms(n))
  return `v${n}`
}

describe.each(MODES)(`useTask on React ${version} ($mode)`, ({ strict }) => {
  it('returns the same handle on every render, and re-renders when a member changes', async () => {
    const { runtime, clock } = testRuntime()
    const seen: Handle[] = []
    const view = await render(runtime, <Probe fn={sleepThen(() => 10)} seen={seen} />, { strict })
    const handle = seen.at(-1)!
    expect(handle.state).toBe('idle')
    expect(handle.runCount).toBe(0)
    expect(handle.last).toBeUndefined()

    let task: Task<string> | undefined
    await step(() => {
      task = handle.run(1)
    })
    expect(handle.last).toBe(task)
    expect(handle.runCount).toBe(1)
    expect(handle.state).toBe('running')
    expect(handle.isRunning).toBe(true)
    expect(view.container.querySelector('output')?.dataset.state).toBe('running')

    await advance(clock, 10)
    expect(await task).toBe('v1')
    expect(handle.state).toBe('success')
    expect(handle.value).toBe('v1')
    expect(handle.isRunning).toBe(false)
    expect(view.container.textContent).toBe('v1')
    // React 18's StrictMode throws its first mount render away, with the hook
    // state it made: from the committed render on, every render has one handle.
    expect(new Set(seen.slice(seen.indexOf(handle)))).toEqual(new Set([handle]))
    expect(seen.length).toBeGreaterThan(seen.indexOf(handle) + 2)
  })

  it('keeps the value of the latest-started success: an older task ending late never wins', async () => {
    const { runtime, clock } = testRuntime()
    const seen: Handle[] = []
    // Call 1 takes 100 ms, call 2 takes 10 ms.
    await render(runtime, <Probe fn={sleepThen((n) => (n === 1 ? 100 : 10))} seen={seen} />, {
      strict,
    })
    const handle = seen.at(-1)!
    let first: Task<string> | undefined
    await step(() => {
      first = handle.run(1)
      handle.run(2)
    })
    await advance(clock, 10)
    expect(handle.value).toBe('v2')
    expect(handle.isRunning).toBe(true) // call 1 still runs
    await advance(clock, 90)
    expect(first?.state).toBe('success')
    expect(await first).toBe('v1')
    expect(handle.value).toBe('v2')
    expect(handle.state).toBe('success')
    expect(handle.isRunning).toBe(false)
  })

  it('keeps the previous value while a newer call runs (stale-while-revalidate)', async () => {
    const { runtime, clock } = testRuntime()
    const seen: Handle[] = []
    await render(runtime, <Probe fn={sleepThen(() => 10)} seen={seen} />, { strict })
    const handle = seen.at(-1)!
    await step(() => handle.run(1))
    await advance(clock, 10)
    await step(() => handle.run(2))
    expect(handle.state).toBe('running')
    expect(handle.value).toBe('v1')
    await advance(clock, 10)
    expect(handle.value).toBe('v2')
  })

  it("reports last's error, and forgets it when a newer call starts", async () => {
    const { runtime, clock } = testRuntime()
    const seen: Handle[] = []
    const boom = new Error('boom')
    const fn = async (ctx: TaskContext, n: number) => {
      await ctx.sleep(10)
      if (n === 1) throw boom
      return `v${n}`
    }
    await render(runtime, <Probe fn={fn} seen={seen} />, { strict })
    const handle = seen.at(-1)!
    await step(() => handle.run(1))
    await advance(clock, 10)
    expect(handle.state).toBe('error')
    expect(handle.error).toBe(boom)
    await step(() => handle.run(2))
    expect(handle.error).toBeUndefined()
    expect(handle.state).toBe('running')
    await advance(clock, 10)
    expect(handle.value).toBe('v2')
  })

  it('calls the fn and options of the latest committed render', async () => {
    const { runtime, clock } = testRuntime()
    const seen: Handle[] = []
    const make = (suffix: string) => async (ctx: TaskContext, n: number) => {
      await ctx.sleep(10)
      return `v${n}${suffix}`
    }
    const view = await render(
      runtime,
      <Probe fn={make('a')} options={{ label: 'first' }} seen={seen} />,
      { strict },
    )
    const handle = seen.at(-1)!
    let task: Task<string> | undefined
    await step(() => {
      task = handle.run(1)
    })
    // New props while the task sleeps: the body already started with fn 'a';
    await view.rerender(<Probe fn={make('b')} options={{ label: 'second' }} seen={seen} />)
    await advance(clock, 10)
    expect(await task).toBe('v1a')
    expect(task?.label).toBe('first')
    // the next call gets the new fn and the new options.
    await step(() => {
      task = handle.run(2)
    })
    expect(task?.label).toBe('second')
    await advance(clock, 10)
    expect(await task).toBe('v2b')
  })

  it('ignores a render React throws away: run() uses the last committed fn', async () => {
    const { runtime, clock } = testRuntime()
    const seen: Handle[] = []
    const make = (tag: string) => async (ctx: TaskContext, n: number) => {
      await ctx.sleep(1)
      return `${tag}${n}`
    }
    const view = await render(
      runtime,
      <Suspending fn={make('a')} until={undefined} seen={seen} />,
      {
        strict,
      },
    )
    const handle = seen.at(-1)!
    // A transition renders fn 'b', then suspends: React keeps the committed UI.
    const gate = deferred<void>()
    const until = { promise: gate.promise, done: false }
    const rendersBefore = seen.length
    await step(() =>
      startTransition(() => {
        view.update(<Suspending fn={make('b')} until={until} seen={seen} />)
      }),
    )
    expect(seen.length).toBeGreaterThan(rendersBefore) // the 'b' render happened…
    let task: Task<string> | undefined
    await step(() => {
      task = handle.run(1)
    })
    await advance(clock, 1)
    expect(await task).toBe('a1') // …and changed nothing
    // Once the transition commits, 'b' is the latest committed fn.
    await step(() => {
      until.done = true
      gate.resolve()
    })
    await step(() => {
      task = handle.run(2)
    })
    await advance(clock, 1)
    expect(await task).toBe('b2')
  })

  it('cancels its live tasks when really unmounted, before the next macrotask', async () => {
    const { runtime } = testRuntime()
    const seen: Handle[] = []
    const view = await render(runtime, <Probe fn={sleepThen(() => 1_000)} seen={seen} />, {
      strict,
    })
    let task: Task<string> | undefined
    await step(() => {
      task = seen.at(-1)!.run(1)
    })
    const rejection = Promise.resolve(task).catch((error: unknown) => error)
    await view.unmount()
    await nextMacrotask()
    expect(task?.state).toBe('cancelled')
    expect(task?.cancelReason).toBe('abort')
    const error = await rejection
    expect(isCancelledError(error) && error.reason).toBe('abort')
  })

  it("with onUnmount: 'keep', an unmount leaves the tasks running", async () => {
    const { runtime, clock } = testRuntime()
    const seen: Handle[] = []
    const view = await render(
      runtime,
      <Probe fn={sleepThen(() => 10)} options={{ onUnmount: 'keep' }} seen={seen} />,
      { strict },
    )
    let task: Task<string> | undefined
    await step(() => {
      task = seen.at(-1)!.run(1)
    })
    await view.unmount()
    await nextMacrotask()
    expect(task?.state).toBe('running')
    await clock.advance(10)
    expect(await task).toBe('v1')
  })

  it('cancels nothing on mount, even when a mount effect calls run()', async () => {
    const { runtime, clock } = testRuntime()
    const tasks: Task<string>[] = []
    const seen: Handle[] = []
    await render(runtime, <Loader tasks={tasks} seen={seen} />, { strict })
    // StrictMode runs the mount effect twice: two tasks, neither cancelled.
    expect(tasks).toHaveLength(strict ? 2 : 1)
    await nextMacrotask()
    expect(tasks.map((t) => t.state)).toEqual(tasks.map(() => 'running'))
    await advance(clock, 10)
    expect(tasks.map((t) => t.state)).toEqual(tasks.map(() => 'success'))
    expect(seen.at(-1)?.value).toBe('v7')
    expect(seen.at(-1)?.runCount).toBe(tasks.length)
  })

  it('throws when run() is called during render', async () => {
    const { runtime } = testRuntime()
    const errors: unknown[] = []
    await render(runtime, <Eager errors={errors} />, { strict })
    expect(errors.length).toBeGreaterThan(0)
    expect(String(errors[0])).toMatch(/run\(\) was called during render/)
  })

  it('cancelAll() cancels every live task of this hook and no other', async () => {
    const { runtime, clock } = testRuntime()
    const a: Handle[] = []
    const b: Handle[] = []
    await render(
      runtime,
      <>
        <Probe fn={sleepThen(() => 10)} seen={a} />
        <Probe fn={sleepThen(() => 10)} seen={b} />
      </>,
      { strict },
    )
    let mine: Task<string>[] = []
    let other: Task<string> | undefined
    await step(() => {
      mine = [a.at(-1)!.run(1), a.at(-1)!.run(2)]
      other = b.at(-1)!.run(3)
    })
    for (const task of mine) task.catch(() => {})
    await step(() => a.at(-1)!.cancelAll())
    expect(mine.map((t) => t.state)).toEqual(['cancelled', 'cancelled'])
    expect(a.at(-1)!.state).toBe('cancelled')
    expect(a.at(-1)!.error).toBeUndefined()
    expect(a.at(-1)!.isRunning).toBe(false)
    expect(other?.state).toBe('running')
    await advance(clock, 10)
    expect(b.at(-1)!.value).toBe('v3')
  })
})
