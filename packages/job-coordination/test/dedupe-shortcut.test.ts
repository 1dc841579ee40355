import {
  createRuntime,
  inspect,
  type Runtime,
  run,
  settle,
  subscribe,
  type Task,
} from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import {
  dedupeCoordinator,
  inspectCoordination,
  installCoordination,
  withCoordinator,
} from '../src/index.js'

// With nobody listening, a call dedupe merges into a live leader ends before
// the kernel builds its task (core's ClaimOptions.followPeer). A listener
// turns that off, since it must see the call's own events. Both ways must
// give the caller the same tasks.

async function scenario(runtime: Runtime) {
  let bodies = 0
  let release!: () => void
  const door = new Promise<void>((resolve) => {
    release = resolve
  })
  const load = (key: number) =>
    withCoordinator(
      async () => {
        bodies++
        await door
        return `value ${key}`
      },
      dedupeCoordinator,
      { key: ['item', key] },
    )
  const tasks: Task<unknown>[] = []
  for (let i = 0; i < 12; i++) tasks.push(run(runtime, load(i % 3), { label: `call ${i}` }))
  const sharedPromises = tasks.map((task, i) => task.promise === tasks[i % 3]!.promise)
  const duringFlight = inspectCoordination(runtime)
  release()
  const seen = []
  for (const task of tasks) {
    const outcome = await settle(task)
    seen.push({
      id: task.id,
      label: task.label,
      state: task.state,
      cancelReason: task.cancelReason,
      cancelledBy: task.cancelledBy,
      value: await task,
      status: outcome.status,
    })
  }
  // A call after the flight ended leads a new one.
  const after = run(runtime, load(0))
  seen.push({ id: after.id, state: after.state, value: await after })
  return {
    seen,
    sharedPromises,
    bodies,
    duringFlight,
    afterwards: inspectCoordination(runtime),
    live: inspect(runtime).sizes.liveTasks,
  }
}

describe('dedupe merges a call before its task is built, invisibly', () => {
  it('gives the same tasks, promises and bodies with and without a listener', async () => {
    const quiet = createRuntime({ plugins: [installCoordination] })
    const heard = createRuntime({ plugins: [installCoordination] })
    const types: string[] = []
    subscribe(heard, (event) => types.push(event.type))
    const withoutListener = await scenario(quiet)
    const withListener = await scenario(heard)
    expect(withoutListener).toEqual(withListener)
    expect(withoutListener.bodies).toBe(4)
    expect(withoutListener.sharedPromises.every(Boolean)).toBe(true)
    expect(withoutListener.seen[5]).toMatchObject({
      state: 'cancelled',
      cancelReason: 'dedupe',
      cancelledBy: withoutListener.seen[2]!.id,
      value: 'value 2',
    })
    expect(withoutListener.duringFlight).toMatchObject({ keys: 3, tasks: 3 })
    expect(withoutListener.afterwards).toMatchObject({ keys: 0, tasks: 0 })
    expect(withoutListener.live).toBe(0)
    // The listener heard each of the 9 merged calls as a task of its own.
    expect(types.filter((type) => type === 'coordination:reuse')).toHaveLength(9)
    expect(types.filter((type) => type === 'task:created')).toHaveLength(13)
  })

  // A taskFn bound once remembers the call of its own that leads (so its
  // next calls skip the index); that memory must never outlive the leader
  // nor cross runtimes.
  it('merges a taskFn bound once into the leader of the runtime it runs on', async () => {
    const a = createRuntime({ plugins: [installCoordination] })
    const b = createRuntime({ plugins: [installCoordination] })
    let bodies = 0
    let release!: () => void
    const door = new Promise<void>((resolve) => {
      release = resolve
    })
    const load = withCoordinator(
      async () => {
        const n = ++bodies
        await door
        return n
      },
      dedupeCoordinator,
      { key: ['shared', 1] },
    )
    const a1 = run(a, load)
    const b1 = run(b, load)
    const a2 = run(a, load)
    const b2 = run(b, load)
    expect(a2).toMatchObject({ state: 'cancelled', cancelReason: 'dedupe', cancelledBy: a1.id })
    expect(b2).toMatchObject({ state: 'cancelled', cancelReason: 'dedupe', cancelledBy: b1.id })
    expect(a2.promise).toBe(a1.promise)
    expect(b2.promise).toBe(b1.promise)
    release()
    expect(await Promise.all([a1, a2, b1, b2])).toEqual([1, 1, 2, 2])
    // Both leaders are over: the next call on each runtime leads again.
    const a3 = run(a, load)
    expect(a3.state).not.toBe('cancelled')
    expect(await a3).toBe(3)
    expect(inspectCoordination(a)).toMatchObject({ keys: 0, tasks: 0 })
    expect(inspectCoordination(b)).toMatchObject({ keys: 0, tasks: 0 })
  })

  it('never merges a call into a leader that already ended, even at once', async () => {
    const runtime = createRuntime({ plugins: [installCoordination] })
    let bodies = 0
    const failing = withCoordinator(
      () => {
        bodies++
        throw new Error('boom')
      },
      dedupeCoordinator,
      { key: ['fails', 1] },
    )
    // The body throws synchronously: its task has ended before run() returns.
    const first = run(runtime, failing)
    expect(first.state).toBe('error')
    const second = run(runtime, failing)
    expect(second.state).toBe('error')
    expect(second.cancelledBy).toBeUndefined()
    expect(bodies).toBe(2)
    await expect(first).rejects.toThrow('boom')
    await expect(second).rejects.toThrow('boom')

    // A leader cancelled while queued is not followed either.
    const busy = createRuntime({ concurrency: 1, plugins: [installCoordination] })
    let open!: () => void
    run(busy, () => new Promise<void>((resolve) => (open = resolve)))
    const load = withCoordinator(async () => 'loaded', dedupeCoordinator, { key: ['queued', 1] })
    const cancelled = run(busy, load)
    cancelled.cancel()
    const next = run(busy, load)
    expect(next.state).toBe('queued')
    expect(next.cancelledBy).toBeUndefined()
    const merged = run(busy, load)
    expect(merged.cancelledBy).toBe(next.id)
    open()
    expect(await merged).toBe('loaded')
    await expect(cancelled).rejects.toThrow()
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, tasks: 0 })
    expect(inspectCoordination(busy)).toMatchObject({ keys: 0, tasks: 0 })
  })
})
