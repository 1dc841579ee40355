import { type Backend, createRuntime, inspect, type Plugin, run, shutdown } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import { createAggregateScheduling, toGroupKey, withAggregate } from '../src/index.js'
import { AggregateBackend } from '../src/internal/aggregate-backend.js'

/**
 * A plugin installed after the scheduling plugin: the backend it is handed is
 * the one the scheduling plugin built, so the test can read its sizes.
 */
function captureBackend(): { readonly plugin: Plugin; backend(): AggregateBackend } {
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
    backend() {
      if (!(captured instanceof AggregateBackend)) throw new Error('no AggregateBackend captured')
      return captured
    },
  }
}

describe('createAggregateScheduling under volume', () => {
  it('100 000 tasks over 10 000 ids in 16 groups: in order per id, one in flight per group, nothing left after', async () => {
    const N = 100_000
    const IDS = 10_000
    const GROUPS = 16
    const scheduling = createAggregateScheduling({
      parallelism: GROUPS,
      schedulerParallelism: GROUPS,
    })
    const capture = captureBackend()
    const runtime = createRuntime({ plugins: [scheduling, capture.plugin] })
    const ids = Array.from({ length: IDS }, (_, i) => `order-${i}`)
    const groupOf = ids.map((id) => toGroupKey(id, GROUPS))
    const lastSeq = new Int32Array(IDS).fill(-1)
    const inside = new Int32Array(GROUPS)
    const peakInside = new Int32Array(GROUPS)
    let outOfOrder = 0
    let busyGroups = 0
    let peakBusyGroups = 0
    let handled = 0

    const tasks = new Array(N)
    for (let i = 0; i < N; i++) {
      const idx = i % IDS
      const seq = Math.floor(i / IDS)
      const g = groupOf[idx]!
      tasks[i] = run(
        runtime,
        withAggregate(
          async () => {
            // Counted inside the body: entry to exit, with a real await between.
            const now = ++inside[g]!
            if (now > peakInside[g]!) peakInside[g] = now
            if (now === 1 && ++busyGroups > peakBusyGroups) peakBusyGroups = busyGroups
            if (lastSeq[idx] !== seq - 1) outOfOrder++
            lastSeq[idx] = seq
            await null
            const left = inside[g]! - 1
            inside[g] = left
            if (left === 0) busyGroups--
            handled++
            return i
          },
          { aggregate: 'sales.Order', id: ids[idx]! },
        ),
      )
    }
    const atPeak = capture.backend().sizes()
    expect(atPeak.waiting).toBeGreaterThan(N - 2 * GROUPS)
    expect(atPeak.groups).toBe(GROUPS)

    const values = await Promise.all(tasks)
    expect(values.every((value, i) => value === i)).toBe(true)
    expect(handled).toBe(N)
    expect(outOfOrder).toBe(0)
    expect(Array.from(peakInside)).toEqual(new Array(GROUPS).fill(1))
    // Lanes ≥ groups: every group had a task in flight at the same time.
    expect(peakBusyGroups).toBe(GROUPS)
    for (let idx = 0; idx < IDS; idx++) {
      if (lastSeq[idx] !== Math.floor((N - 1 - idx) / IDS)) {
        expect.fail(`id ${idx} ended at seq ${lastSeq[idx]}`)
      }
    }

    // Every internal structure is empty: the backend's, the runtime's, the stats'.
    expect(capture.backend().sizes()).toEqual({
      groups: 0,
      waiting: 0,
      withdrawn: 0,
      lanesHeld: 0,
      inOrder: 0,
    })
    const { sizes } = inspect(runtime)
    expect(sizes).toMatchObject({ liveTasks: 0, queued: 0, slotsInUse: 0, runningBodies: 0 })
    const stats = scheduling.stats()
    expect(stats.groups).toBe(0)
    expect(stats.aggregates).toHaveLength(1)
    expect(stats.aggregates[0]).toMatchObject({
      dispatched: N,
      completed: N,
      failed: 0,
      dropped: 0,
      queued: 0,
      inFlight: 0,
    })
    expect(stats.aggregates[0]!.latency.count).toBe(N)
    const report = await shutdown(runtime)
    expect(report.errors).toEqual([])
  }, 120_000)
})
