import { afterEach, describe, expect, it, vi } from 'vitest'
import { createRuntime, debounce, run, settle, type Task, withShaper } from '../src/index.js'
import { flush, recordedRuntime } from './helpers.js'

afterEach(() => {
  vi.restoreAllMocks()
})

describe('onUnobservedError', () => {
  it('by default reports a fire-and-forget failure once to console.error, with its id and label', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    const runtime = createRuntime()
    const boom = new Error('boom')
    const task = run(
      runtime,
      () => {
        throw boom
      },
      { label: 'save' },
    )
    expect(errors).not.toHaveBeenCalled()
    await flush()
    await flush()
    expect(errors).toHaveBeenCalledTimes(1)
    expect(String(errors.mock.calls[0]![0])).toMatch(/task #1 "save" failed and nobody observed it/)
    expect(errors.mock.calls[0]![1]).toBe(boom)
    // Observing it late does not report it again, and nothing reports twice.
    await expect(task).rejects.toBe(boom)
    await flush()
    expect(errors).toHaveBeenCalledTimes(1)
  })

  it('a custom function replaces console.error and receives the error and the task', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    const seen: Array<[unknown, Task<unknown>]> = []
    const runtime = createRuntime({ onUnobservedError: (error, task) => seen.push([error, task]) })
    const failure = new Error('async')
    const task = run(runtime, async () => {
      throw failure
    })
    await flush()
    await flush()
    expect(seen).toEqual([[failure, task]])
    expect(errors).not.toHaveBeenCalled()
  })

  it('false turns reporting off', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    const runtime = createRuntime({ onUnobservedError: false })
    run(runtime, () => {
      throw new Error('quiet')
    })
    await flush()
    await flush()
    expect(errors).not.toHaveBeenCalled()
  })

  it('observed failures are never reported: await, catch, then, finally, promise, settle', async () => {
    const reported: unknown[] = []
    const { runtime, clock } = recordedRuntime({ onUnobservedError: (e) => reported.push(e) })
    const fail = () => run(runtime, () => Promise.reject(new Error('x')))
    const awaited = (async () => {
      try {
        await fail()
      } catch {}
    })()
    fail().catch(() => {})
    fail().then(undefined, () => {})
    fail()
      .finally(() => {})
      .catch(() => {})
    fail().promise.catch(() => {})
    void settle(fail())
    // Observed after it ended, but within the macrotask: still observed.
    const late = fail()
    await Promise.resolve()
    late.catch(() => {})
    // A timeout error observed through settle.
    const timedOut = run(runtime, (ctx) => ctx.sleep(100), { timeout: 10 })
    void settle(timedOut)
    await clock.advance(10)
    await awaited
    await flush()
    await flush()
    expect(reported).toEqual([])
  })

  it('cancellations and successes are never reported; an unobserved one among observed ones is, once', async () => {
    const reported: Array<[unknown, number]> = []
    const { runtime } = recordedRuntime({ onUnobservedError: (e, t) => reported.push([e, t.id]) })
    run(runtime, () => 1)
    run(runtime, (ctx) => ctx.sleep(10)).cancel()
    const watched = run(runtime, () => Promise.reject(new Error('watched')))
    watched.catch(() => {})
    const lost = new Error('lost')
    const unwatched = run(runtime, () => Promise.reject(lost))
    await flush()
    await flush()
    expect(reported).toEqual([[lost, unwatched.id]])
  })

  it('a handler that throws is reported to console.error and the others still run', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    const seen: number[] = []
    const runtime = createRuntime({
      onUnobservedError: (_e, task) => {
        seen.push(task.id)
        if (task.id === 1) throw new Error('handler broke')
      },
    })
    run(runtime, () => Promise.reject(new Error('a')))
    run(runtime, () => Promise.reject(new Error('b')))
    await flush()
    await flush()
    expect(seen).toEqual([1, 2])
    expect(errors).toHaveBeenCalledTimes(1)
    expect(String(errors.mock.calls[0]![0])).toMatch(
      /onUnobservedError.*threw while reporting task #1/,
    )
  })

  it('a debounced burst whose merged call was awaited observes the survivor', async () => {
    const reported: unknown[] = []
    const { runtime, clock } = recordedRuntime({ onUnobservedError: (e) => reported.push(e) })
    const search = withShaper(() => Promise.reject(new Error('search failed')), debounce(50), {
      key: 'q',
    })
    const first = run(runtime, search)
    const awaited = first.promise.catch((e: Error) => e.message)
    run(runtime, search) // the survivor, never awaited itself
    await clock.advance(50)
    expect(await awaited).toBe('search failed')
    await flush()
    await flush()
    expect(reported).toEqual([])
  })
})
