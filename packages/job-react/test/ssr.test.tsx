import { inspect, type Runtime, type TaskContext } from '@vega/job-core'
import { JobProvider, useCounts, useTask, useTaskState } from '@vega/job-react'
import { act, StrictMode, version } from 'react'
import { hydrateRoot } from 'react-dom/client'
import { renderToString } from 'react-dom/server'
import { describe, expect, it } from 'vitest'
import { advance, MODES, step, testRuntime } from './support.js'

function App() {
  const search = useTask(async (ctx: TaskContext, q: string) => {
    await ctx.sleep(10)
    return `results for ${q}`
  })
  const last = useTaskState(search.last, (s) => s.state)
  const { live } = useCounts()
  return (
    <main>
      <button type="button" onClick={() => search.run('vega')}>
        search
      </button>
      <output>{`${search.state} ${last ?? 'none'} ${live} ${search.value ?? '-'}`}</output>
    </main>
  )
}

const tree = (runtime: Runtime, strict: boolean) => {
  const app = (
    <JobProvider runtime={runtime}>
      <App />
    </JobProvider>
  )
  return strict ? <StrictMode>{app}</StrictMode> : app
}

describe.each(MODES)(`server rendering on React ${version} ($mode)`, ({ strict }) => {
  it('renders idle and runs nothing; hydrateRoot reports no recoverable error', async () => {
    const server = testRuntime().runtime
    const html = renderToString(tree(server, strict))
    expect(html).toContain('idle none 0 -')
    expect(inspect(server).lastSeq).toBe(0) // not one event: nothing ran, nobody subscribed

    const { runtime, clock } = testRuntime()
    const container = document.createElement('div')
    container.innerHTML = html
    document.body.append(container)
    const recoverable: unknown[] = []
    let root: ReturnType<typeof hydrateRoot> | undefined
    await act(async () => {
      root = hydrateRoot(container, tree(runtime, strict), {
        onRecoverableError: (error) => recoverable.push(error),
      })
    })
    expect(recoverable).toEqual([])
    expect(container.querySelector('output')?.textContent).toBe('idle none 0 -')

    await step(() => container.querySelector('button')?.click())
    expect(container.querySelector('output')?.textContent).toBe('running running 1 -')
    await advance(clock, 10)
    expect(container.querySelector('output')?.textContent).toBe(
      'success success 0 results for vega',
    )
    await act(async () => root?.unmount())
    container.remove()
    expect(recoverable).toEqual([])
  })
})
