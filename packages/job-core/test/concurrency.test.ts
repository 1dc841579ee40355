import { describe, expect, it } from 'vitest'
import { createRuntime, inspect, run } from '../src/index.js'
import { flush, gate, recordedRuntime } from './helpers.js'

describe('concurrency and priority', () => {
  it('never runs more bodies than the limit', async () => {
    const { runtime } = recordedRuntime({ concurrency: 3 })
    let running = 0
    let peak = 0
    const gates = Array.from({ length: 10 }, () => gate())
    const tasks = gates.map((g) =>
      run(runtime, async () => {
        running++
        peak = Math.max(peak, running)
        await g.promise
        running--
      }),
    )
    expect(tasks.map((t) => t.state)).toEqual([
      ...Array(3).fill('running'),
      ...Array(7).fill('queued'),
    ])
    for (const g of gates) {
      g.open()
      await flush()
    }
    await Promise.all(tasks)
    expect(peak).toBe(3)
  })

  it('starts queued tasks by priority, FIFO within a priority', async () => {
    const { runtime } = recordedRuntime({ concurrency: 1 })
    const order: string[] = []
    const hold = gate()
    run(runtime, () => hold.promise)
    const spec: Array<[string, number]> = [
      ['low-1', -1],
      ['mid-1', 0],
      ['high-1', 5],
      ['mid-2', 0],
      ['high-2', 5],
      ['low-2', -1],
    ]
    const tasks = spec.map(([name, priority]) =>
      run(
        runtime,
        () => {
          order.push(name)
        },
        { priority },
      ),
    )
    hold.open()
    await Promise.all(tasks)
    expect(order).toEqual(['high-1', 'high-2', 'mid-1', 'mid-2', 'low-1', 'low-2'])
    expect(inspect(runtime).sizes.queued).toBe(0)
  })

  it('a task with a free slot and nothing queued ahead starts inside run()', () => {
    const runtime = createRuntime({ concurrency: 1 })
    const hold = gate()
    const first = run(runtime, () => hold.promise)
    expect(first.state).toBe('running')
    const second = run(runtime, () => 2)
    expect(second.state).toBe('queued')
    hold.open()
  })

  it('defaults to unlimited concurrency', () => {
    const runtime = createRuntime()
    const hold = gate()
    const tasks = Array.from({ length: 1000 }, () => run(runtime, () => hold.promise))
    expect(tasks.every((t) => t.state === 'running')).toBe(true)
    hold.open()
  })

  it('many synchronous bodies through one slot do not grow the stack', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const hold = gate()
    run(runtime, () => hold.promise)
    const tasks = Array.from({ length: 50_000 }, (_, i) => run(runtime, () => i))
    hold.open()
    const values = await Promise.all(tasks)
    expect(values[49_999]).toBe(49_999)
  })
})

describe('the priority backend under churn', () => {
  it('withdrawn jobs never start, and the queue keeps FIFO order around them', async () => {
    const { runtime } = recordedRuntime({ concurrency: 1 })
    const hold = gate()
    run(runtime, () => hold.promise)
    const started: number[] = []
    const tasks = Array.from({ length: 500 }, (_, i) =>
      run(
        runtime,
        () => {
          started.push(i)
        },
        { priority: i % 3 },
      ),
    )
    for (const [i, task] of tasks.entries()) if (i % 5 !== 0) task.cancel()
    expect(inspect(runtime).sizes.queued).toBe(100)
    hold.open()
    await Promise.allSettled(tasks.map((t) => t.promise))
    const expected = [2, 1, 0].flatMap((p) =>
      Array.from({ length: 500 }, (_, i) => i).filter((i) => i % 5 === 0 && i % 3 === p),
    )
    expect(started).toEqual(expected)
    expect(inspect(runtime).sizes).toMatchObject({ queued: 0, slotsInUse: 0, liveTasks: 0 })
  })
})
