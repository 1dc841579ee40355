import { getEventBus, inspect, run } from '@vega/job-core'
import { type UseTaskHandle, useCounts, useRuntimeEvent, useTask } from '@vega/job-react'
import { Profiler, useState, version } from 'react'
import { describe, expect, it } from 'vitest'
import { advance, MODES, render, step, testRuntime } from './support.js'

type Handle = UseTaskHandle<[], number>

const ROW_IDS = Array.from({ length: 1_000 }, (_, id) => id)

function Row({ index, handles }: { index: number; handles: Handle[] }) {
  const task = useTask(async (ctx) => {
    await ctx.sleep(1)
    return index
  })
  handles[index] = task
  return <li>{task.state}</li>
}

function Footer() {
  const { live, running, queued } = useCounts()
  return <footer>{`${live} live, ${running} running, ${queued} queued`}</footer>
}

function TransitionLog({ log }: { log: string[] }) {
  const [prefix, setPrefix] = useState('a')
  useRuntimeEvent('task:transition', (event) => log.push(`${prefix}:${event.to}`))
  return (
    <button type="button" onClick={() => setPrefix('b')}>
      {prefix}
    </button>
  )
}

describe.each(MODES)(`renders on React ${version} ($mode)`, ({ strict }) => {
  it('1,000 mounted hooks and 10,000 unrelated events: no render, one bus listener', async () => {
    const { runtime, clock } = testRuntime()
    const handles: Handle[] = []
    let commits = 0
    await render(
      runtime,
      <Profiler id="rows" onRender={() => commits++}>
        <ul>
          {ROW_IDS.map((id) => (
            <Row key={id} index={id} handles={handles} />
          ))}
        </ul>
      </Profiler>,
      { strict },
    )
    // Give the hooks some history: every one ran a task to its end.
    await step(() => {
      for (const handle of handles) handle.run()
    })
    await advance(clock, 1)
    expect(handles.every((handle) => handle.state === 'success')).toBe(true)
    expect(inspect(runtime).sizes.listeners).toBe(1)

    const before = { commits, seq: inspect(runtime).lastSeq }
    await step(async () => {
      // Tasks of nobody, and custom diagnostics: 10,000 events in all.
      const tasks = Array.from({ length: 2_000 }, () => run(runtime, () => 0))
      await Promise.all(tasks)
      const bus = getEventBus(runtime)
      const emitted = inspect(runtime).lastSeq - before.seq
      for (let i = emitted; i < 10_000; i++) bus.emit({ type: 'app:noise', i })
    })
    expect(inspect(runtime).lastSeq - before.seq).toBe(10_000)
    expect(commits).toBe(before.commits)
    expect(inspect(runtime).sizes.listeners).toBe(1)
  })

  it('useCounts follows the runtime and renders only when a count changes', async () => {
    const { runtime, clock } = testRuntime([], { concurrency: 1 })
    let commits = 0
    const view = await render(
      runtime,
      <Profiler id="footer" onRender={() => commits++}>
        <Footer />
      </Profiler>,
      { strict },
    )
    expect(view.container.textContent).toBe('0 live, 0 running, 0 queued')
    await step(() => {
      run(runtime, (ctx) => ctx.sleep(10))
      run(runtime, (ctx) => ctx.sleep(10))
    })
    expect(view.container.textContent).toBe('2 live, 1 running, 1 queued')
    const afterStart = commits
    getEventBus(runtime).emit({ type: 'app:noise' })
    await step()
    expect(commits).toBe(afterStart) // an event that changes no count renders nothing
    await advance(clock, 10)
    await advance(clock, 10)
    expect(view.container.textContent).toBe('0 live, 0 running, 0 queued')
  })

  it('useRuntimeEvent calls the latest listener, and unsubscribes on unmount', async () => {
    const { runtime, clock } = testRuntime()
    const log: string[] = []
    const view = await render(runtime, <TransitionLog log={log} />, { strict })
    await step(() => run(runtime, (ctx) => ctx.sleep(5)))
    await advance(clock, 5)
    expect(log).toEqual(['a:queued', 'a:running', 'a:success'])
    await step(() => view.container.querySelector('button')?.click())
    expect(view.container.textContent).toBe('b')
    await step(() => run(runtime, (ctx) => ctx.sleep(5)))
    await advance(clock, 5)
    expect(log.slice(3)).toEqual(['b:queued', 'b:running', 'b:success'])
    await view.unmount()
    expect(inspect(runtime).sizes.listeners).toBe(0)
    await step(() => run(runtime, () => 1))
    expect(log).toHaveLength(6)
  })
})
