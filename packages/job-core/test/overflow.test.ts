import { describe, expect, it } from 'vitest'
import { counts, run, settle } from '../src/index.js'
import { gate, recordedRuntime } from './helpers.js'

describe('maxQueued + overflow', () => {
  it("'reject-new' (default) cancels the task that would overflow, before it runs", async () => {
    const { runtime, timeline } = recordedRuntime({ concurrency: 1, maxQueued: 2 })
    const body = gate()
    const tasks = [
      run(runtime, () => body.promise),
      run(runtime, () => 'a'),
      run(runtime, () => 'b'),
    ]
    let ran = false
    const rejected = run(runtime, () => {
      ran = true
    })
    expect(rejected.state).toBe('cancelled')
    expect(rejected.cancelReason).toBe('overflow')
    await expect(rejected).rejects.toMatchObject({ name: 'CancelledError', reason: 'overflow' })
    expect(timeline(rejected)).toEqual(['idle>queued@0', 'queued>cancelled(overflow)@0'])
    expect(counts(runtime).queued).toBe(2)
    body.open()
    expect(await Promise.all(tasks)).toEqual([undefined, 'a', 'b'])
    expect(ran).toBe(false)
  })

  it('a task that finds a free slot is never refused, even with maxQueued: 0', async () => {
    const { runtime } = recordedRuntime({ concurrency: 1, maxQueued: 0 })
    const body = gate()
    const first = run(runtime, () => body.promise)
    expect(first.state).toBe('running')
    expect(run(runtime, () => 1).cancelReason).toBe('overflow')
    body.open()
    await first
    expect(await run(runtime, () => 2)).toBe(2)
  })

  it("'drop-oldest' cancels the longest-waiting task to admit the new one", async () => {
    const { runtime } = recordedRuntime({ concurrency: 1, maxQueued: 2, overflow: 'drop-oldest' })
    const body = gate()
    const head = run(runtime, () => body.promise)
    const oldest = run(runtime, () => 'oldest')
    const middle = run(runtime, () => 'middle')
    const newest = run(runtime, () => 'newest')
    expect(oldest.cancelReason).toBe('overflow')
    expect(oldest.cancelledBy).toBe(newest.id)
    expect(newest.state).toBe('queued')
    body.open()
    expect(await Promise.all([head, middle, newest])).toEqual([undefined, 'middle', 'newest'])
    expect((await settle(oldest)).status).toBe('cancelled')
  })

  it("'drop-oldest' with priorities drops the oldest of the lowest priority, never a higher one", async () => {
    const { runtime } = recordedRuntime({ concurrency: 1, maxQueued: 2, overflow: 'drop-oldest' })
    const body = gate()
    const head = run(runtime, () => body.promise)
    const urgent = run(runtime, () => 'urgent', { priority: 5 })
    const low = run(runtime, () => 'low', { priority: 0 })
    const normal = run(runtime, () => 'normal', { priority: 1 })
    // The queue was full: the lowest priority (low) went, although urgent is older.
    expect(low.cancelReason).toBe('overflow')
    expect(urgent.state).toBe('queued')
    // A newcomer below every queued priority is itself the one dropped.
    const lowest = run(runtime, () => 'lowest', { priority: -1 })
    expect(lowest.cancelReason).toBe('overflow')
    expect(lowest.cancelledBy).toBeUndefined()
    expect([urgent.state, normal.state]).toEqual(['queued', 'queued'])
    body.open()
    expect(await Promise.all([head, urgent, normal])).toEqual([undefined, 'urgent', 'normal'])
    await settle(low)
    await settle(lowest)
  })

  it('a retry is not new work: it re-enters a full queue', async () => {
    const { runtime, clock } = recordedRuntime({ concurrency: 1, maxQueued: 1 })
    let calls = 0
    const flaky = run(
      runtime,
      () => {
        if (++calls === 1) throw new Error('first')
        return 'ok'
      },
      { retry: { attempts: 2, delay: 10 } },
    )
    const body = gate()
    const holder = run(runtime, () => body.promise)
    const waiting = run(runtime, () => 'waiting')
    expect(counts(runtime).queued).toBe(1)
    await clock.advance(10)
    expect(flaky.state).toBe('queued')
    expect(counts(runtime).queued).toBe(2)
    body.open()
    expect(await Promise.all([flaky, holder, waiting])).toEqual(['ok', undefined, 'waiting'])
  })
})
