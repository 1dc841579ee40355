import { describe, expect, it } from 'vitest'
import { createRuntime, getEventBus, type RuntimeEvent, run, subscribe } from '../src/index.js'
import { gate } from './helpers.js'

declare module '../src/index.js' {
  interface RuntimeEventMap {
    'test:step': { n: number }
  }
}

// On the system clock, the events of one kernel step — one run() call, or
// one body's exit with the starts it makes — carry one clock reading, and a
// body is never part of a step. Listeners here wait until Date.now() has
// moved, so a second reading inside a step would show as a later `at`.

/** Spins until the system clock has moved past `from`. */
function waitPast(from: number): void {
  while (Date.now() <= from) {
    // spin: the point is to let real time pass inside a listener or a body
  }
}

type Transition = Extract<RuntimeEvent, { type: 'task:transition' }>

function transitionOf(events: RuntimeEvent[], taskId: number, to: string): Transition {
  const found = events.find(
    (e): e is Transition => e.type === 'task:transition' && e.taskId === taskId && e.to === to,
  )
  if (found === undefined) throw new Error(`no transition of task ${taskId} to ${to}`)
  return found
}

describe('one clock reading per kernel step (system clock, someone listening)', () => {
  it('stamps a run() call’s events, and what its listeners emit, with one reading', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const events: RuntimeEvent[] = []
    subscribe(runtime, (event) => {
      events.push(event)
      if (event.type === 'task:created') {
        waitPast(event.at)
        getEventBus(runtime).emit({ type: 'test:step', n: 1 })
        waitPast(event.at + 1)
      }
    })
    const held = gate()
    const first = run(runtime, () => held.promise)
    const second = run(runtime, () => 2)
    const firstAt = events.find((e) => e.type === 'task:created' && e.taskId === first.id)!.at
    const secondAt = events.find((e) => e.type === 'task:created' && e.taskId === second.id)!.at
    // Each call is its own step, read at its start.
    expect(secondAt).toBeGreaterThan(firstAt)
    // The first call: created, the listener's own event, queued, running.
    const ofFirst = events.slice(0, 4)
    expect(ofFirst.map((e) => e.type)).toEqual([
      'task:created',
      'test:step',
      'task:transition',
      'task:transition',
    ])
    expect(transitionOf(events, first.id, 'running').seq).toBe(4)
    expect(ofFirst.map((e) => e.at)).toEqual([firstAt, firstAt, firstAt, firstAt])
    expect(transitionOf(events, second.id, 'queued').at).toBe(secondAt)
    held.open()
    expect(await second).toBe(2)
  })

  it('stamps a body’s ending and the start of the task that takes its slot with one reading', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const events: RuntimeEvent[] = []
    const held = gate()
    const first = run(runtime, () => held.promise)
    const second = run(runtime, () => gate().promise)
    subscribe(runtime, (event) => {
      events.push(event)
      // Time passes between the ending and the start it makes.
      if (event.type === 'task:transition' && event.to === 'success') waitPast(event.at + 1)
    })
    held.open()
    await first
    await Promise.resolve()
    const ended = transitionOf(events, first.id, 'success')
    const started = transitionOf(events, second.id, 'running')
    expect(started.seq).toBeGreaterThan(ended.seq)
    expect(started.at).toBe(ended.at)
    second.cancel()
  })

  it('does not count a body that runs inside run() as part of the step', async () => {
    const runtime = createRuntime()
    const events: RuntimeEvent[] = []
    subscribe(runtime, (event) => events.push(event))
    const task = run(runtime, () => {
      waitPast(Date.now())
      return 'done'
    })
    expect(await task).toBe('done')
    const running = transitionOf(events, task.id, 'running')
    const succeeded = transitionOf(events, task.id, 'success')
    expect(running.at).toBe(events[0]!.at)
    expect(succeeded.at).toBeGreaterThan(running.at)
  })

  it('keeps at from ever decreasing along seq while listeners take time and emit', async () => {
    const runtime = createRuntime({ concurrency: 2 })
    const events: RuntimeEvent[] = []
    let n = 0
    subscribe(runtime, (event) => {
      events.push(event)
      if (event.type !== 'test:step' && ++n % 3 === 0) {
        waitPast(event.at)
        getEventBus(runtime).emit({ type: 'test:step', n })
      }
    })
    const tasks = Array.from({ length: 6 }, (_, i) =>
      run(runtime, async () => {
        await Promise.resolve()
        return i
      }),
    )
    expect(await Promise.all(tasks)).toEqual([0, 1, 2, 3, 4, 5])
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1))
    for (let i = 1; i < events.length; i++) {
      expect(events[i]!.at, `${events[i]!.type} #${events[i]!.seq}`).toBeGreaterThanOrEqual(
        events[i - 1]!.at,
      )
    }
  })
})
