import { run, type Task, type TaskContext } from '@vega/job-core'
import { type TaskStateSnapshot, type UseTaskHandle, useTask, useTaskState } from '@vega/job-react'
import * as React from 'react'
import { Profiler, version } from 'react'
import { describe, expect, it } from 'vitest'
import { advance, MODES, nextMacrotask, REACT_MAJOR, render, step, testRuntime } from './support.js'

function Full({ task, seen }: { task: Task<string> | undefined; seen: unknown[] }) {
  const snapshot = useTaskState(task)
  seen.push(snapshot)
  return <output>{snapshot?.state ?? 'none'}</output>
}

function RunningFlag({ task }: { task: Task<string> }) {
  const running = useTaskState(task, (s) => s.state === 'running')
  return <output>{running ? 'running' : 'not running'}</output>
}

function Done({ task }: { task: Task<string> }) {
  const done = useTaskState(task, (s) => s.state === 'success')
  return <output>{String(done)}</output>
}

type Handle = UseTaskHandle<[number], string>

function Starter({ seen }: { seen: Handle[] }) {
  const handle = useTask(
    async (ctx: TaskContext, n: number) => {
      await ctx.sleep(50)
      return `v${n}`
    },
    { onUnmount: 'keep' },
  )
  seen.push(handle)
  return <output>{handle.state}</output>
}

function Panel({ seen, keep }: { seen: Handle[]; keep: boolean }) {
  const handle = useTask(
    async (ctx: TaskContext, n: number) => {
      await ctx.sleep(50)
      return `v${n}`
    },
    { onUnmount: keep ? 'keep' : 'cancel' },
  )
  seen.push(handle)
  return <output>{`${handle.state}:${handle.value ?? '-'}`}</output>
}

describe.each(MODES)(`useTaskState on React ${version} ($mode)`, ({ strict }) => {
  it('reads undefined for undefined, and a frozen snapshot for a task', async () => {
    const { runtime, clock } = testRuntime()
    const seen: unknown[] = []
    const view = await render(runtime, <Full task={undefined} seen={seen} />, { strict })
    expect(seen.at(-1)).toBeUndefined()
    const task = run(
      runtime,
      async (ctx) => {
        await ctx.sleep(10)
        return 'done'
      },
      { label: 'load' },
    )
    await view.rerender(<Full task={task} seen={seen} />)
    const running = seen.at(-1) as TaskStateSnapshot<string>
    expect(running).toEqual({
      id: task.id,
      label: 'load',
      state: 'running',
      cancelReason: undefined,
      cancelledBy: undefined,
      attempt: 1,
      value: undefined,
      error: undefined,
    })
    expect(Object.isFrozen(running)).toBe(true)
    await advance(clock, 10)
    expect(seen.at(-1)).toMatchObject({ state: 'success', value: 'done' })
    expect(view.container.textContent).toBe('success')
  })

  it('a selector re-renders once per flip, whatever else changes', async () => {
    const { runtime, clock } = testRuntime([], { concurrency: 1 })
    const blocker = run(runtime, (ctx) => ctx.sleep(10))
    let attempts = 0
    const task = run(
      runtime,
      async (ctx) => {
        await ctx.sleep(10)
        if (++attempts === 1) throw new Error('first attempt fails')
        return 'ok'
      },
      { retry: { attempts: 2, delay: 5 } },
    )
    expect(task.state).toBe('queued')
    const commits = { full: 0, flag: 0 }
    const seen: unknown[] = []
    await render(
      runtime,
      <>
        <Profiler id="full" onRender={() => commits.full++}>
          <Full task={task} seen={seen} />
        </Profiler>
        <Profiler id="flag" onRender={() => commits.flag++}>
          <RunningFlag task={task} />
        </Profiler>
      </>,
      { strict },
    )
    const states = () => (seen as TaskStateSnapshot<string>[]).map((s) => s.state)
    await advance(clock, 10) // blocker ends: running (attempt 1)
    await advance(clock, 10) // attempt 1 fails: parked:retry
    await advance(clock, 5) // attempt 2 starts: running
    await advance(clock, 10) // success
    await blocker
    expect(await task).toBe('ok')
    expect([...new Set(states())]).toEqual(['queued', 'running', 'parked:retry', 'success'])
    // queued → running → parked:retry → running → success: 4 changes, and 4 flips
    // of "is it running"; the mount is the first commit of each.
    expect(commits.full).toBe(5)
    expect(commits.flag).toBe(5)
  })

  it('a selector ignores the changes that do not change its answer', async () => {
    const { runtime, clock } = testRuntime([], { concurrency: 1 })
    const blocker = run(runtime, (ctx) => ctx.sleep(10))
    const task = run(runtime, async (ctx) => {
      await ctx.sleep(10)
      return 'ok'
    })
    let commits = 0
    const view = await render(
      runtime,
      <Profiler id="done" onRender={() => commits++}>
        <Done task={task} />
      </Profiler>,
      { strict },
    )
    await advance(clock, 10) // queued → running: no flip
    expect(commits).toBe(1)
    await advance(clock, 10)
    await blocker
    await task
    expect(commits).toBe(2)
    expect(view.container.textContent).toBe('true')
  })

  it("'keep': a component mounted after the task ended reads its terminal state at once", async () => {
    const { runtime, clock } = testRuntime()
    const starters: Handle[] = []
    const view = await render(runtime, <Starter seen={starters} />, { strict })
    let task: Task<string> | undefined
    await step(() => {
      task = starters.at(-1)!.run(1)
    })
    await view.rerender(<p>elsewhere</p>)
    await nextMacrotask()
    expect(task?.state).toBe('running') // kept
    await advance(clock, 50)
    expect(task?.state).toBe('success')
    const seen: unknown[] = []
    await view.rerender(<Full task={task} seen={seen} />)
    // The very first render shows the end, never a frozen 'running'.
    expect(seen[0]).toMatchObject({ state: 'success', value: 'v1' })
  })
})

// <Activity> is React 19's; React 18.3 has no such component.
const Activity = (React as unknown as { Activity?: React.ComponentType<ActivityProps> }).Activity
interface ActivityProps {
  mode: 'visible' | 'hidden'
  children: React.ReactNode
}

if (REACT_MAJOR >= 19) {
  describe.each(MODES)(`<Activity> on React ${version} ($mode)`, ({ strict }) => {
    it('exports Activity under that name', () => {
      expect(Activity).toBeDefined() // not unstable_Activity: stable since 19.2
    })

    it("'keep': shown again, the hook reads the state the task reached while hidden", async () => {
      const Shown = Activity!
      const { runtime, clock } = testRuntime()
      const seen: Handle[] = []
      const tree = (mode: 'visible' | 'hidden') => (
        <Shown mode={mode}>
          <Panel seen={seen} keep />
        </Shown>
      )
      const view = await render(runtime, tree('visible'), { strict })
      let task: Task<string> | undefined
      await step(() => {
        task = seen.at(-1)!.run(1)
      })
      expect(view.container.textContent).toBe('running:-')
      await view.rerender(tree('hidden'))
      await nextMacrotask()
      expect(task?.state).toBe('running')
      await advance(clock, 50) // ends while hidden
      expect(task?.state).toBe('success')
      await view.rerender(tree('visible'))
      expect(view.container.textContent).toBe('success:v1')
      expect(seen.at(-1)!.state).toBe('success')
    })

    it("'cancel' (the default): hiding counts as unmounting", async () => {
      const Shown = Activity!
      const { runtime } = testRuntime()
      const seen: Handle[] = []
      const tree = (mode: 'visible' | 'hidden') => (
        <Shown mode={mode}>
          <Panel seen={seen} keep={false} />
        </Shown>
      )
      const view = await render(runtime, tree('visible'), { strict })
      let task: Task<string> | undefined
      await step(() => {
        task = seen.at(-1)!.run(1)
      })
      task?.catch(() => {})
      await view.rerender(tree('hidden'))
      await nextMacrotask()
      expect(task?.cancelReason).toBe('abort')
      await view.rerender(tree('visible'))
      expect(view.container.textContent).toBe('cancelled:-')
    })
  })
}
