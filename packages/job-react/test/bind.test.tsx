import {
  dedupeCoordinator,
  exhaustCoordinator,
  installCoordination,
  restartCoordinator,
  withCoordinator,
} from '@vega/job-coordination'
import {
  debounce,
  isCancelledError,
  type Task,
  type TaskContext,
  type TaskFn,
  withShaper,
} from '@vega/job-core'
import { type UseTaskHandle, type UseTaskOptions, useTask } from '@vega/job-react'
import { version } from 'react'
import { describe, expect, it } from 'vitest'
import { advance, MODES, render, step, testRuntime } from './support.js'

type Handle = UseTaskHandle<[string], string>

function Probe({
  fn,
  options,
  seen,
}: {
  fn: (ctx: TaskContext, q: string) => Promise<string>
  options: UseTaskOptions<[string], string>
  seen: Handle[]
}) {
  const handle = useTask(fn, options)
  seen.push(handle)
  return <output>{handle.value ?? '-'}</output>
}

/** A body that records its calls and answers after `ms` on the fake clock. */
function recorder(ms: number, prefix = '') {
  const calls: string[] = []
  const fn = async (ctx: TaskContext, q: string) => {
    calls.push(q)
    await ctx.sleep(ms)
    return `${prefix}${q}`
  }
  return { calls, fn }
}

const quiet = (tasks: readonly Task<unknown>[]) => {
  for (const task of tasks) task.catch(() => {})
}

describe.each(MODES)(`useTask with bind on React ${version} ($mode)`, ({ strict }) => {
  it('restart: each call cancels the one before; the newest value shows', async () => {
    const { runtime, clock } = testRuntime([installCoordination])
    const { calls, fn } = recorder(50, 'results for ')
    const seen: Handle[] = []
    const bind = (taskFn: TaskFn<string>) =>
      withCoordinator(taskFn, restartCoordinator, { key: 'search' })
    await render(runtime, <Probe fn={fn} options={{ bind }} seen={seen} />, { strict })
    const search = seen.at(-1)!
    let typed: Task<string>[] = []
    await step(() => {
      typed = ['v', 've', 'veg'].map((q) => search.run(q))
    })
    quiet(typed)
    expect(typed.map((t) => t.state)).toEqual(['cancelled', 'cancelled', 'running'])
    expect(typed.map((t) => t.cancelReason)).toEqual(['abort', 'abort', undefined])
    expect(search.state).toBe('running')
    expect(search.error).toBeUndefined() // a cancellation is not an error
    await advance(clock, 50)
    expect(calls).toEqual(['v', 've', 'veg'])
    expect(search.value).toBe('results for veg')
    expect(search.state).toBe('success')
  })

  it('dedupe: two rows loading one document run one body and both show its value', async () => {
    const { runtime, clock } = testRuntime([installCoordination])
    const { calls, fn } = recorder(20, 'doc ')
    const bind = (taskFn: TaskFn<string>, id: string) =>
      withCoordinator(taskFn, dedupeCoordinator, { key: ['doc', id] })
    const first: Handle[] = []
    const second: Handle[] = []
    const view = await render(
      runtime,
      <>
        <Probe fn={fn} options={{ bind }} seen={first} />
        <Probe fn={fn} options={{ bind }} seen={second} />
      </>,
      { strict },
    )
    let leader: Task<string> | undefined
    let follower: Task<string> | undefined
    await step(() => {
      leader = first.at(-1)!.run('7')
      follower = second.at(-1)!.run('7')
    })
    expect(follower?.cancelReason).toBe('dedupe')
    expect(second.at(-1)!.state).toBe('cancelled')
    await advance(clock, 20)
    expect(calls).toEqual(['7'])
    expect(leader?.state).toBe('success')
    expect(first.at(-1)!.value).toBe('doc 7')
    // The merged call's caller got the leader's value, and so does its hook.
    expect(second.at(-1)!.value).toBe('doc 7')
    expect(view.container.textContent).toBe('doc 7doc 7')
  })

  it('exhaust: clicks while a save runs are dropped, not errors', async () => {
    const { runtime, clock } = testRuntime([installCoordination])
    const { calls, fn } = recorder(30, 'saved ')
    const bind = (taskFn: TaskFn<string>) =>
      withCoordinator(taskFn, exhaustCoordinator, { key: 'save' })
    const seen: Handle[] = []
    await render(runtime, <Probe fn={fn} options={{ bind }} seen={seen} />, { strict })
    const save = seen.at(-1)!
    let clicks: Task<string>[] = []
    await step(() => {
      clicks = ['a', 'b', 'c'].map((draft) => save.run(draft))
    })
    const outcomes = clicks.map((task) => Promise.resolve(task).catch((error: unknown) => error))
    expect(clicks.map((t) => t.cancelReason)).toEqual([
      undefined,
      'exhaust-dropped',
      'exhaust-dropped',
    ])
    // last is the dropped third click: cancelled, and no error to show
    expect(save.state).toBe('cancelled')
    expect(save.error).toBeUndefined()
    expect(save.isRunning).toBe(true) // the first save still runs
    await advance(clock, 30)
    expect(calls).toEqual(['a'])
    expect(save.value).toBe('saved a')
    expect(save.isRunning).toBe(false)
    const [first, ...dropped] = await Promise.all(outcomes)
    expect(first).toBe('saved a')
    for (const error of dropped) expect(isCancelledError(error)).toBe(true)
  })

  it('debounce: a burst runs once, with the last arguments and the latest props', async () => {
    const { runtime, clock } = testRuntime()
    const keystrokes = debounce(100) // one shaper value: calls share its window
    const bind = (taskFn: TaskFn<string>) => withShaper(taskFn, keystrokes, { key: 'search' })
    const seen: Handle[] = []
    const bodies: string[] = []
    const make = (scope: string) => async (ctx: TaskContext, q: string) => {
      bodies.push(`${scope}:${q}`)
      await ctx.sleep(10)
      return `${scope}:${q}`
    }
    const view = await render(
      runtime,
      <Probe fn={make('old scope')} options={{ bind }} seen={seen} />,
      { strict },
    )
    const search = seen.at(-1)!
    let burst: Task<string>[] = []
    await step(() => {
      burst = ['r', 're', 'rea'].map((q) => search.run(q))
    })
    expect(search.isWaiting).toBe(true)
    // The props change inside the window: the body that finally runs sees them.
    await view.rerender(<Probe fn={make('new scope')} options={{ bind }} seen={seen} />)
    await advance(clock, 100)
    await advance(clock, 10)
    expect(bodies).toEqual(['new scope:rea'])
    expect(await Promise.all(burst)).toEqual(['new scope:rea', 'new scope:rea', 'new scope:rea'])
    expect(search.value).toBe('new scope:rea')
    expect(search.isWaiting).toBe(false)
  })

  it('bind is called with the call arguments, and must return a function', async () => {
    const { runtime } = testRuntime()
    const seen: Handle[] = []
    const { fn } = recorder(1)
    await render(
      runtime,
      <Probe fn={fn} options={{ bind: () => 'nope' as unknown as TaskFn<string> }} seen={seen} />,
      { strict },
    )
    expect(() => seen.at(-1)!.run('x')).toThrow(
      /useTask\(fn, \{ bind \}\): bind must return a task function .*got 'nope'/,
    )
    expect(seen.at(-1)!.runCount).toBe(0)
  })
})
