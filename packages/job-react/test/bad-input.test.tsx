import type { Runtime, Task } from '@vega/job-core'
import {
  JobProvider,
  useCounts,
  useRuntime,
  useRuntimeEvent,
  useTask,
  useTaskState,
} from '@vega/job-react'
import { act, version } from 'react'
import { createRoot } from 'react-dom/client'
import { describe, expect, it } from 'vitest'
import { MODES, render, testRuntime } from './support.js'

/** Calls `hook` while rendering and reports what it threw (caught here, so React logs nothing). */
function Catch({ hook, errors }: { hook: () => unknown; errors: unknown[] }) {
  try {
    hook()
  } catch (error) {
    errors.push(error)
  }
  return null
}

async function thrownBy(hook: () => unknown, strict: boolean): Promise<Error> {
  const { runtime } = testRuntime()
  const errors: unknown[] = []
  await render(runtime, <Catch hook={hook} errors={errors} />, { strict })
  expect(errors.length).toBeGreaterThan(0)
  return errors[0] as Error
}

describe.each(MODES)(`bad input on React ${version} ($mode)`, ({ strict }) => {
  it('useTask: fn must be a function', async () => {
    const error = await thrownBy(() => useTask('search' as never), strict)
    expect(error).toBeInstanceOf(TypeError)
    expect(error.message).toBe("useTask(fn, options): fn must be a function, got 'search'.")
  })

  it('useTask: onUnmount is cancel or keep', async () => {
    const error = await thrownBy(
      () => useTask(async () => 1, { onUnmount: 'pause' as never }),
      strict,
    )
    expect(error.message).toBe(
      "useTask(fn, { onUnmount }): onUnmount must be 'cancel' or 'keep', got 'pause'.",
    )
  })

  it('useTask: bind must be a function', async () => {
    const error = await thrownBy(() => useTask(async () => 1, { bind: 42 as never }), strict)
    expect(error.message).toMatch(/^useTask\(fn, \{ bind \}\): bind must be a function .*got 42\.$/)
  })

  it('useTask: a misspelled option is named, with the closest known one', async () => {
    const error = await thrownBy(
      () => useTask(async () => 1, { onUnmout: 'keep' } as never),
      strict,
    )
    expect(error.message).toMatch(
      /useTask\(fn, options\): unknown option 'onUnmout'; did you mean 'onUnmount'\?/,
    )
  })

  it('useTaskState: task must be a task or undefined', async () => {
    const error = await thrownBy(() => useTaskState(7 as unknown as Task<number>), strict)
    expect(error.message).toBe(
      'useTaskState(task): task must be a task returned by run() or undefined, got 7.',
    )
  })

  it('useRuntimeEvent: type and listener are checked', async () => {
    const noType = await thrownBy(() => useRuntimeEvent('', () => {}), strict)
    expect(noType.message).toMatch(/type must be an event type .*got ''\./)
    const noListener = await thrownBy(
      () => useRuntimeEvent('task:transition', null as never),
      strict,
    )
    expect(noListener.message).toBe(
      'useRuntimeEvent(type, listener): listener must be a function, got null.',
    )
  })
})

describe(`outside a provider on React ${version}`, () => {
  it.each([
    ['useRuntime()', () => useRuntime()],
    ['useTask(fn, options)', () => useTask(async () => 1)],
    ['useTaskState(task)', () => useTaskState(undefined)],
    ['useCounts()', () => useCounts()],
    ['useRuntimeEvent(type, listener)', () => useRuntimeEvent('task:created', () => {})],
  ])('%s throws an Error that names JobProvider', async (name, hook) => {
    const errors: unknown[] = []
    const container = document.createElement('div')
    const root = createRoot(container)
    await act(async () => root.render(<Catch hook={hook} errors={errors} />))
    await act(async () => root.unmount())
    expect(errors[0]).toBeInstanceOf(Error)
    expect((errors[0] as Error).message).toBe(
      `${name}: no runtime here. Wrap the tree in <JobProvider runtime={runtime}> (from @vega/job-react).`,
    )
  })
})

describe('JobProvider', () => {
  it.each([
    [undefined, 'undefined'],
    [null, 'null'],
    [{ name: 'fake' }, 'an object'],
  ])('throws at once for runtime=%s, naming the prop and the value', (runtime, shown) => {
    expect(() => JobProvider({ runtime: runtime as unknown as Runtime })).toThrow(
      new TypeError(
        `<JobProvider runtime>: the runtime prop must be a runtime from createRuntime(), got ${shown}.`,
      ),
    )
  })
})
