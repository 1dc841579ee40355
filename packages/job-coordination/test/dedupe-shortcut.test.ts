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
})
