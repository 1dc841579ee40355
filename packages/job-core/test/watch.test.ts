import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  counts,
  createRuntime,
  createTaskTag,
  inspect,
  type RuntimeEvent,
  run,
  subscribe,
  type TaskTransitionEvent,
  tagTaskFn,
  watch,
} from '../src/index.js'
import { flush, gate } from './helpers.js'

afterEach(() => {
  vi.restoreAllMocks()
})

const moves = (events: readonly TaskTransitionEvent[]) => events.map((e) => `${e.from}>${e.to}`)

describe('watch(task, listener)', () => {
  it('gets each later transition of the task, the same event the bus delivers, the terminal one last', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const onBus: RuntimeEvent[] = []
    subscribe(runtime, (e) => onBus.push(e))
    const blocker = gate()
    run(runtime, () => blocker.promise)
    const body = gate<number>()
    const task = run(runtime, () => body.promise)
    const seen: TaskTransitionEvent[] = []
    watch(task, (e) => seen.push(e))
    blocker.open()
    await flush()
    body.open(7)
    await task
    expect(moves(seen)).toEqual(['queued>running', 'running>success'])
    const fromBus = onBus.filter((e) => e.type === 'task:transition' && e.taskId === task.id)
    // The same objects, so the same seq and at.
    expect(seen).toEqual(fromBus.slice(1))
    expect(seen[0]).toBe(fromBus[1])
  })

  it('works without any bus listener, and its events take seq from the runtime', async () => {
    const runtime = createRuntime()
    const body = gate()
    const task = run(runtime, () => body.promise)
    const seen: TaskTransitionEvent[] = []
    watch(task, (e) => seen.push(e))
    body.open()
    await task
    expect(moves(seen)).toEqual(['running>success'])
    expect(seen[0]!.seq).toBe(inspect(runtime).lastSeq)
  })

  it('runs after the runtime moved: counts(), inspect() and the handle agree with the event', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const blocker = gate()
    run(runtime, () => blocker.promise)
    const body = gate()
    const task = run(runtime, () => body.promise)
    const views: unknown[] = []
    watch(task, (e) => {
      views.push({
        to: e.to,
        state: task.state,
        running: counts(runtime).running,
        live: counts(runtime).live,
        listed: inspect(runtime).tasks.some((t) => t.id === task.id),
      })
    })
    blocker.open()
    await flush()
    body.open()
    await task
    expect(views).toEqual([
      { to: 'running', state: 'running', running: 1, live: 1, listed: true },
      { to: 'success', state: 'success', running: 0, live: 0, listed: false },
    ])
  })

  it('never observes the task: a failure nobody awaited is still reported', async () => {
    const unobserved: unknown[] = []
    const runtime = createRuntime({ onUnobservedError: (error) => unobserved.push(error) })
    const failure = new Error('boom')
    const body = gate()
    const task = run(runtime, () => body.promise)
    const seen: TaskTransitionEvent[] = []
    watch(task, (e) => seen.push(e))
    body.fail(failure)
    await flush()
    await flush()
    expect(moves(seen)).toEqual(['running>error'])
    expect(seen[0]!.error).toBe(failure)
    expect(unobserved).toEqual([failure])
  })

  it('on a task that already ended, never calls the listener and returns a remover that does nothing', async () => {
    const runtime = createRuntime()
    const task = run(runtime, () => 1)
    await task
    const listener = vi.fn()
    const stop = watch(task, listener)
    expect(typeof stop).toBe('function')
    stop()
    await flush()
    expect(listener).not.toHaveBeenCalled()
  })

  it('on a call merged into a peer before it was built (ended at birth), does nothing either', async () => {
    const tag = createTaskTag<string>('testFollow')
    let peer: ReturnType<typeof run> | undefined
    const runtime = createRuntime({
      plugins: [
        {
          name: 'testFollow',
          install: (host) =>
            void host.claim(tag, (request) => request.proceed(), { followPeer: () => peer }),
        },
      ],
    })
    const body = gate()
    peer = run(
      runtime,
      tagTaskFn(() => body.promise, tag, 'k'),
    )
    const merged = run(
      runtime,
      tagTaskFn(() => 2, tag, 'k'),
    )
    expect(merged.state).toBe('cancelled')
    const listener = vi.fn()
    watch(merged, listener)
    body.open()
    await peer
    expect(listener).not.toHaveBeenCalled()
  })

  it('the returned function stops it, also from inside the listener; a second call does nothing', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const blocker = gate()
    run(runtime, () => blocker.promise)
    const body = gate()
    const task = run(runtime, () => body.promise)
    const selfStopping: string[] = []
    const stopSelf = watch(task, (e) => {
      selfStopping.push(e.to)
      stopSelf()
    })
    const stopped: string[] = []
    const stop = watch(task, (e) => stopped.push(e.to))
    stop()
    stop()
    blocker.open()
    await flush()
    body.open()
    await task
    expect(selfStopping).toEqual(['running'])
    expect(stopped).toEqual([])
  })

  it('a watcher removed by another during the same event is not called with it', () => {
    const runtime = createRuntime({ concurrency: 1 })
    run(runtime, () => new Promise(() => {}))
    const task = run(runtime, () => 1)
    const calls: string[] = []
    let stopSecond = (): void => {}
    watch(task, () => {
      calls.push('first')
      stopSecond()
    })
    stopSecond = watch(task, () => calls.push('second'))
    task.cancel()
    expect(calls).toEqual(['first'])
  })

  it('a watcher added during an event starts with the next one', () => {
    const runtime = createRuntime({ concurrency: 1 })
    run(runtime, () => new Promise(() => {}))
    const body = gate()
    const task = run(runtime, () => body.promise)
    const late: string[] = []
    let added = false
    subscribe(runtime, (e) => {
      if (e.type === 'task:transition' && e.taskId === task.id && !added) {
        added = true
        watch(task, (w) => late.push(w.to))
      }
    })
    const first: string[] = []
    watch(task, (e) => {
      first.push(e.to)
    })
    task.cancel()
    // The terminal event was the one being told when the second watcher came: nothing later.
    expect(first).toEqual(['cancelled'])
    expect(late).toEqual([])
  })

  it('tells the transitions a listener causes after the one being told, in the order they happened', async () => {
    const runtime = createRuntime()
    const dependency = gate()
    const first = run(runtime, () => dependency.promise)
    const task = run(runtime, () => 2, { dependsOn: [first] })
    // A bus listener, told before the watchers, ends the task the moment it is queued.
    subscribe(runtime, (e) => {
      if (e.type === 'task:transition' && e.taskId === task.id && e.to === 'queued') task.cancel()
    })
    const seen: string[] = []
    const alsoSeen: string[] = []
    watch(task, (e) => seen.push(`${e.from}>${e.to}`))
    watch(task, (e) => alsoSeen.push(`${e.from}>${e.to}`))
    dependency.open()
    await flush()
    expect(task.state).toBe('cancelled')
    expect(seen).toEqual(['parked:dependencies>queued', 'queued>cancelled'])
    expect(alsoSeen).toEqual(seen)
  })

  it('a watcher that ends its own task: every watcher still gets the earlier event first', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const blocker = gate()
    run(runtime, () => blocker.promise)
    const task = run(runtime, () => new Promise(() => {}))
    const first: string[] = []
    const second: string[] = []
    watch(task, (e) => {
      first.push(e.to)
      if (e.to === 'running') task.cancel()
    })
    watch(task, (e) => second.push(e.to))
    blocker.open()
    await flush()
    expect(first).toEqual(['running', 'cancelled'])
    expect(second).toEqual(['running', 'cancelled'])
  })

  it('a watcher that throws is reported as runtime:listener-error and keeps watching', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const errors: RuntimeEvent[] = []
    subscribe(runtime, (e) => {
      if (e.type === 'runtime:listener-error') errors.push(e)
    })
    const blocker = gate()
    run(runtime, () => blocker.promise)
    const task = run(runtime, () => 1)
    const calls: string[] = []
    watch(task, (e) => {
      calls.push(e.to)
      throw new Error(`bad ${e.to}`)
    })
    const after: string[] = []
    watch(task, (e) => after.push(e.to))
    blocker.open()
    await task
    expect(calls).toEqual(['running', 'success'])
    expect(after).toEqual(['running', 'success'])
    expect(
      errors.map((e) => e.type === 'runtime:listener-error' && (e.error as Error).message),
    ).toEqual(['bad running', 'bad success'])
  })

  it('a watcher that throws with nobody on the bus goes to console.error', async () => {
    const consoleErrors = vi.spyOn(console, 'error').mockImplementation(() => {})
    const runtime = createRuntime()
    const body = gate()
    const task = run(runtime, () => body.promise)
    watch(task, () => {
      throw new Error('alone')
    })
    body.open()
    await task
    expect(consoleErrors).toHaveBeenCalledTimes(1)
    expect(consoleErrors.mock.calls[0]![1]).toEqual(new Error('alone'))
  })

  it('refuses what is not a task and a listener that is not a function', () => {
    const runtime = createRuntime()
    const task = run(runtime, () => 1)
    expect(() => watch({ id: 1 } as never, () => {})).toThrow(
      /watch\(task, listener\): task must be a task returned by run\(\), got/,
    )
    expect(() => watch(task, 'log' as never)).toThrow(
      /watch\(task, listener\): listener must be a function \(event\) => void, got/,
    )
  })
})
