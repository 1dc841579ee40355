import {
  type Backend,
  createRuntime,
  inspect,
  type Plugin,
  run,
  settle,
  shutdown,
} from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import { createAggregateScheduling, toGroupKey, withAggregate } from '../src/index.js'
import { AggregateBackend, IN_ORDER_KEPT } from '../src/internal/aggregate-backend.js'
import { flushTimes, gate } from './helpers.js'

/** Installed after the scheduling plugin: it is handed the AggregateBackend, to read its sizes. */
function captureBackend(): {
  readonly plugin: Plugin
  sizes(): ReturnType<AggregateBackend['sizes']>
} {
  let captured: Backend | undefined
  return {
    plugin: {
      name: 'capture-backend',
      install(host) {
        host.useBackend((inner) => {
          captured = inner
          return inner
        })
      },
    },
    sizes() {
      if (!(captured instanceof AggregateBackend)) throw new Error('no AggregateBackend captured')
      return captured.sizes()
    },
  }
}

const EMPTY = { groups: 0, waiting: 0, withdrawn: 0, lanesHeld: 0, inOrder: 0 }

describe('AggregateBackend (the job-runtime path)', () => {
  it('a task handed to the runtime but waiting for a runtime slot, cancelled, gives its lane and group to the next task', async () => {
    const scheduling = createAggregateScheduling({ parallelism: 8, schedulerParallelism: 1 })
    const capture = captureBackend()
    const runtime = createRuntime({ concurrency: 1, plugins: [scheduling, capture.plugin] })
    const log: string[] = []
    const unblock = gate()
    // An unbound task takes the runtime's only slot.
    const blocker = run(runtime, async () => {
      log.push('blocker')
      await unblock.promise
    })
    const route = { aggregate: 'sales.Order', id: 'order-1' } as const
    const first = run(
      runtime,
      withAggregate(async () => void log.push('first'), route),
    )
    const second = run(
      runtime,
      withAggregate(async () => void log.push('second'), route),
    )
    await flushTimes(2)
    // first holds Order's only lane and waits in the runtime queue; second waits in its group.
    expect(capture.sizes()).toMatchObject({ groups: 1, waiting: 1, lanesHeld: 1 })
    first.cancel()
    expect(first.state).toBe('cancelled')
    await flushTimes(2)
    // second took the lane at once and now waits for the runtime slot.
    expect(capture.sizes()).toMatchObject({ groups: 1, waiting: 0, lanesHeld: 1 })
    unblock.open()
    await settle(second)
    await settle(blocker)
    expect(log).toEqual(['blocker', 'second'])
    expect(scheduling.stats().aggregates[0]).toMatchObject({
      dropped: 1,
      completed: 1,
      queued: 0,
      inFlight: 0,
    })
    expect(capture.sizes()).toEqual(EMPTY)
    expect(inspect(runtime).sizes).toMatchObject({ liveTasks: 0, queued: 0, slotsInUse: 0 })
    await shutdown(runtime)
  })

  it('cancelling most waiting tasks of a long queue: the rest still run in order, nothing is left behind', async () => {
    const scheduling = createAggregateScheduling({ parallelism: 4, schedulerParallelism: 2 })
    const capture = captureBackend()
    const runtime = createRuntime({ plugins: [scheduling, capture.plugin] })
    const ids = ['a', 'b', 'c', 'd', 'e', 'f']
    const seen = new Map<string, number[]>(ids.map((id) => [id, []]))
    const tasks = []
    for (let i = 0; i < 600; i++) {
      const id = ids[i % ids.length]!
      tasks.push(
        run(
          runtime,
          withAggregate(
            async () => {
              seen.get(id)!.push(i)
              await null
            },
            { aggregate: 'sales.Order', id },
          ),
        ),
      )
    }
    // Keep one in five; the others are withdrawn while they wait (some groups end up empty of live tasks).
    const kept = new Set<number>()
    for (let i = 0; i < 600; i++) {
      if (i % 5 === 0) kept.add(i)
      else tasks[i]!.cancel()
    }
    expect(capture.sizes().withdrawn).toBeGreaterThan(0)
    await Promise.all(tasks.map((task) => settle(task)))
    for (const id of ids) {
      const order = seen.get(id)!
      expect([...order].sort((x, y) => x - y)).toEqual(order)
      for (const i of order) expect(kept.has(i) || i < 16).toBe(true)
    }
    expect(
      tasks.filter((task) => task.state === 'success').length +
        tasks.filter((task) => task.state === 'cancelled').length,
    ).toBe(600)
    const stats = scheduling.stats().aggregates[0]!
    expect(stats.completed + stats.dropped).toBe(600)
    expect(stats).toMatchObject({ queued: 0, inFlight: 0 })
    expect(capture.sizes()).toEqual(EMPTY)
    expect(new Set(ids.map((id) => toGroupKey(id, 4))).size).toBeGreaterThan(1)
    await shutdown(runtime)
  })

  it('bodies that end out of the order they started in: each release finds its turn, groups stay serial, nothing is kept', async () => {
    const parallelism = 64
    const scheduling = createAggregateScheduling({
      parallelism,
      schedulerParallelism: parallelism,
    })
    const capture = captureBackend()
    const runtime = createRuntime({ plugins: [scheduling, capture.plugin] })
    const ids = distinctGroupIds(3, parallelism)
    const log: string[] = []
    const gates = ids.map(() => gate())
    const tasks = ids.flatMap((id, i) => [
      run(
        runtime,
        withAggregate(
          async () => {
            log.push(`${id} first`)
            await gates[i]!.promise
          },
          { aggregate: 'sales.Order', id },
        ),
      ),
      run(
        runtime,
        withAggregate(async () => void log.push(`${id} second`), { aggregate: 'sales.Order', id }),
      ),
    ])
    await flushTimes(2)
    expect(capture.sizes()).toMatchObject({ groups: 3, waiting: 3, lanesHeld: 3, inOrder: 3 })
    // The newest first: its release cannot be the oldest forwarded turn's.
    for (const i of [2, 0, 1]) {
      gates[i]!.open()
      await flushTimes(4)
      expect(log.indexOf(`${ids[i]} second`)).toBeGreaterThan(log.indexOf(`${ids[i]} first`))
    }
    await Promise.all(tasks.map((task) => settle(task)))
    expect(tasks.every((task) => task.state === 'success')).toBe(true)
    expect(scheduling.stats().aggregates[0]).toMatchObject({ completed: 6, queued: 0, inFlight: 0 })
    expect(capture.sizes()).toEqual(EMPTY)
    await shutdown(runtime)
  })

  it(`more turns in flight than the ${IN_ORDER_KEPT} kept in forwarding order, ended newest first: all released, nothing kept`, async () => {
    const parallelism = 256
    const scheduling = createAggregateScheduling({
      parallelism,
      schedulerParallelism: parallelism,
    })
    const capture = captureBackend()
    const runtime = createRuntime({ plugins: [scheduling, capture.plugin] })
    const ids = distinctGroupIds(IN_ORDER_KEPT + 36, parallelism)
    const gates = ids.map(() => gate())
    let inside = 0
    const tasks = ids.map((id, i) =>
      run(
        runtime,
        withAggregate(
          async () => {
            inside++
            await gates[i]!.promise
            inside--
          },
          { aggregate: 'sales.Order', id },
        ),
      ),
    )
    await flushTimes(2)
    expect(inside).toBe(ids.length)
    expect(capture.sizes()).toMatchObject({ lanesHeld: ids.length, inOrder: IN_ORDER_KEPT })
    for (let i = ids.length - 1; i >= 0; i--) gates[i]!.open()
    await Promise.all(tasks.map((task) => settle(task)))
    expect(tasks.every((task) => task.state === 'success')).toBe(true)
    expect(inside).toBe(0)
    expect(scheduling.stats().aggregates[0]).toMatchObject({
      completed: ids.length,
      queued: 0,
      inFlight: 0,
    })
    expect(capture.sizes()).toEqual(EMPTY)
    await shutdown(runtime)
  })
})

/** `count` aggregate ids whose groups (`toGroupKey(id, parallelism)`) all differ. */
function distinctGroupIds(count: number, parallelism: number): string[] {
  const ids: string[] = []
  const groups = new Set<number>()
  for (let i = 0; ids.length < count; i++) {
    const group = toGroupKey(`order-${i}`, parallelism)
    if (groups.has(group)) continue
    groups.add(group)
    ids.push(`order-${i}`)
  }
  return ids
}
