import { describe, expect, it } from 'vitest'
import { counts, pause, type RuntimeEvent, resume, run, type Task } from '../src/index.js'
import { recordedRuntime } from './helpers.js'

/** Whether the task's body has started (it may have finished already). */
const started = (task: Task<unknown>) => task.state !== 'queued'

/** Clock times at which bodies started (queued → running). */
function startTimes(events: RuntimeEvent[]): number[] {
  return events.flatMap((e) => (e.type === 'task:transition' && e.to === 'running' ? [e.at] : []))
}

describe('rateLimit', () => {
  it('sliding (the default): never more than limit starts in any interval', async () => {
    const { runtime, clock, events } = recordedRuntime({ rateLimit: { limit: 2, interval: 100 } })
    run(runtime, () => 'a')
    await clock.advance(90)
    run(runtime, () => 'b')
    await clock.advance(10)
    const later = [run(runtime, () => 'c'), run(runtime, () => 'd'), run(runtime, () => 'e')]
    // t=100: the start at 0 has left the window, the one at 90 has not.
    expect(later.map(started)).toEqual([true, false, false])
    expect(counts(runtime).queued).toBe(2)
    await clock.advance(89)
    expect(later[1]!.state).toBe('queued')
    await clock.advance(1)
    expect(later.map(started)).toEqual([true, true, false])
    await clock.advance(100)
    expect(await Promise.all(later)).toEqual(['c', 'd', 'e'])
    expect(startTimes(events)).toEqual([0, 90, 100, 190, 200])
  })

  it("fixed: a window admits limit starts, then the next window opens (p-queue's intervalCap)", async () => {
    const { runtime, clock, events } = recordedRuntime({
      rateLimit: { limit: 2, interval: 100, window: 'fixed' },
    })
    run(runtime, () => 'a')
    await clock.advance(90)
    run(runtime, () => 'b')
    await clock.advance(10)
    const later = [run(runtime, () => 'c'), run(runtime, () => 'd'), run(runtime, () => 'e')]
    // t=100: the window opened at 0 has closed, a new one admits two at once.
    expect(later.map(started)).toEqual([true, true, false])
    await clock.advance(100)
    expect(await Promise.all(later)).toEqual(['c', 'd', 'e'])
    expect(startTimes(events)).toEqual([0, 90, 100, 100, 200])
  })

  it('a retry counts as a start and waits for the window in queued', async () => {
    const { runtime, clock, transitions } = recordedRuntime({
      rateLimit: { limit: 1, interval: 100 },
    })
    let calls = 0
    const task = run(
      runtime,
      () => {
        if (++calls === 1) throw new Error('first')
        return calls
      },
      { retry: { attempts: 2, delay: 10 } },
    )
    await clock.advance(10)
    expect(task.state).toBe('queued')
    await clock.advance(89)
    expect(task.state).toBe('queued')
    await clock.advance(1)
    expect(await task).toBe(2)
    expect(transitions(task.id)).toContain('parked:retry>queued')
  })

  it('works with a concurrency limit and priorities: the window picks the highest waiting', async () => {
    const { runtime, clock } = recordedRuntime({
      concurrency: 1,
      rateLimit: { limit: 1, interval: 50 },
    })
    const order: string[] = []
    const tasks = [
      run(runtime, () => void order.push('first')),
      run(runtime, () => void order.push('low')),
      run(runtime, () => void order.push('high'), { priority: 2 }),
    ]
    await clock.advance(50)
    await clock.advance(50)
    await Promise.all(tasks)
    expect(order).toEqual(['first', 'high', 'low'])
  })

  it('a paused runtime spends no start of its window', async () => {
    const { runtime, clock } = recordedRuntime({ rateLimit: { limit: 1, interval: 100 } })
    pause(runtime)
    const task = run(runtime, () => 1)
    await clock.advance(500)
    expect(task.state).toBe('queued')
    resume(runtime)
    expect(started(task)).toBe(true)
    const next = run(runtime, () => 2)
    expect(next.state).toBe('queued')
    await clock.advance(100)
    expect(await Promise.all([task, next])).toEqual([1, 2])
  })
})
