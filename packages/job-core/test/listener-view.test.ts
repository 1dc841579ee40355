import { describe, expect, it } from 'vitest'
import {
  counts,
  createRuntime,
  createTestClock,
  inspect,
  type RuntimeCounts,
  type RuntimeEvent,
  run,
  settle,
  shutdown,
  subscribe,
  type Task,
  type TaskState,
  whenIdle,
} from '../src/index.js'
import { flush, gate } from './helpers.js'

/** What a listener saw of the runtime while it handled one transition. */
interface Seen {
  readonly move: string
  readonly counts: RuntimeCounts
  readonly inspected: ReadonlyArray<{ id: number; state: TaskState }>
}

/** Records, for every transition, `counts()` and `inspect()` as its listener reads them. */
function seeing(runtime: ReturnType<typeof createRuntime>): Seen[] {
  const seen: Seen[] = []
  subscribe(runtime, (e) => {
    if (e.type !== 'task:transition') return
    seen.push({
      move: `#${e.taskId} ${e.from}>${e.to}`,
      counts: counts(runtime),
      inspected: inspect(runtime).tasks.map(({ id, state }) => ({ id, state })),
    })
  })
  return seen
}

function at(seen: Seen[], move: string): Seen {
  const found = seen.find((s) => s.move === move)
  if (found === undefined) throw new Error(`no ${move} in ${seen.map((s) => s.move).join(', ')}`)
  return found
}

describe('a listener reads the runtime after the event it got', () => {
  it('queued → running counts the body; running → success leaves nothing live', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const seen = seeing(runtime)
    const body = gate<number>()
    const task = run(runtime, () => body.promise)
    expect(at(seen, `#${task.id} idle>queued`).counts).toEqual({
      live: 1,
      parked: 0,
      queued: 1,
      running: 0,
      exiting: 0,
    })
    const started = at(seen, `#${task.id} queued>running`)
    expect(started.counts).toEqual({ live: 1, parked: 0, queued: 0, running: 1, exiting: 0 })
    expect(started.inspected).toEqual([{ id: task.id, state: 'running' }])
    body.open(1)
    await task
    const ended = at(seen, `#${task.id} running>success`)
    expect(ended.counts).toEqual({ live: 0, parked: 0, queued: 0, running: 0, exiting: 0 })
    expect(ended.inspected).toEqual([])
  })

  it('the task handle has ended when its terminal transition is told', () => {
    const runtime = createRuntime()
    const task: { current?: Task<unknown> } = {}
    const handleSeen: Array<{ state: TaskState; reason: string | undefined }> = []
    subscribe(runtime, (e) => {
      if (e.type === 'task:transition' && e.to === 'cancelled' && task.current !== undefined) {
        handleSeen.push({ state: task.current.state, reason: task.current.cancelReason })
      }
    })
    task.current = run(runtime, () => new Promise(() => {}))
    task.current.cancel()
    expect(handleSeen).toEqual([{ state: 'cancelled', reason: 'abort' }])
  })

  it('a cancelled body still inside counts as exiting at the ending, and not at its task:exited', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const seen = seeing(runtime)
    const atExit: RuntimeCounts[] = []
    subscribe(runtime, (e) => {
      if (e.type === 'task:exited') atExit.push(counts(runtime))
    })
    const body = gate()
    // Ignores its signal until the gate opens.
    const task = run(runtime, () => body.promise)
    task.cancel()
    expect(at(seen, `#${task.id} running>cancelled`).counts).toEqual({
      live: 0,
      parked: 0,
      queued: 0,
      running: 1,
      exiting: 1,
    })
    body.open()
    await whenIdle(runtime)
    expect(atExit).toEqual([{ live: 0, parked: 0, queued: 0, running: 0, exiting: 0 }])
  })

  it('a failed attempt that waits for its retry no longer counts as running', async () => {
    const clock = createTestClock()
    const runtime = createRuntime({ clock })
    const seen = seeing(runtime)
    let calls = 0
    const task = run(
      runtime,
      async () => {
        if (++calls === 1) throw new Error('first')
        return calls
      },
      { retry: { attempts: 2, delay: 10 } },
    )
    await flush()
    expect(at(seen, `#${task.id} running>parked:retry`).counts).toEqual({
      live: 1,
      parked: 1,
      queued: 0,
      running: 0,
      exiting: 0,
    })
    await clock.advance(10)
    expect(await task).toBe(2)
  })

  it('a timed-out body still inside counts as running at its retry, as exiting at the ending', async () => {
    const clock = createTestClock()
    const runtime = createRuntime({ clock })
    const seen = seeing(runtime)
    const bodies = [gate(), gate()]
    let calls = 0
    const task = run(runtime, () => bodies[calls++]!.promise, {
      timeout: { attempt: 5 },
      retry: { attempts: 2, delay: 0 },
    })
    await clock.advance(5)
    expect(at(seen, `#${task.id} running>parked:retry`).counts).toMatchObject({
      parked: 1,
      running: 1,
      exiting: 0,
    })
    // The retry waits for the stale body: when it leaves, the second attempt starts.
    bodies[0]!.open()
    await flush()
    await clock.advance(5)
    expect(at(seen, `#${task.id} running>error`).counts).toEqual({
      live: 0,
      parked: 0,
      queued: 0,
      running: 1,
      exiting: 1,
    })
    bodies[1]!.open()
    await settle(task)
    await whenIdle(runtime)
    expect(counts(runtime)).toEqual({ live: 0, parked: 0, queued: 0, running: 0, exiting: 0 })
  })
})

describe('idle waits for the slot, not only for the counts', () => {
  it('a draining shutdown disposes plugins after the last body gave its slot back', async () => {
    const slotsAtDispose: number[] = []
    const runtime = createRuntime({
      plugins: [
        {
          name: 'slotReader',
          install: (host) => () => {
            slotsAtDispose.push(inspect(host.runtime).sizes.slotsInUse)
          },
        },
      ],
    })
    const body = gate()
    const task = run(runtime, () => body.promise)
    const stopped = shutdown(runtime)
    body.open()
    await task
    await stopped
    expect(slotsAtDispose).toEqual([0])
  })
})

describe('a binding that keeps counts from events only', () => {
  /** Buckets of live tasks by state, kept from task:created and task:transition alone. */
  function eventCounts() {
    const byState = new Map<TaskState, number>()
    let live = 0
    const bump = (state: TaskState, by: number) =>
      byState.set(state, (byState.get(state) ?? 0) + by)
    const isEnd = (state: TaskState) =>
      state === 'success' || state === 'error' || state === 'cancelled'
    return {
      apply(e: RuntimeEvent): void {
        if (e.type === 'task:created') {
          live++
          bump('idle', 1)
        } else if (e.type === 'task:transition') {
          bump(e.from, -1)
          if (isEnd(e.to)) live--
          else bump(e.to, 1)
        }
      },
      get live() {
        return live
      },
      of(state: TaskState): number {
        return byState.get(state) ?? 0
      },
    }
  }

  it('agrees with counts() at every event and ends at zero', async () => {
    const clock = createTestClock()
    const runtime = createRuntime({ concurrency: 2, clock, onUnobservedError: false })
    const kept = eventCounts()
    const disagreements: string[] = []
    subscribe(runtime, (e) => {
      kept.apply(e)
      const actual = counts(runtime)
      const fromEvents = {
        live: kept.live,
        queued: kept.of('queued'),
        parked: kept.live - kept.of('queued') - kept.of('running'),
      }
      const { live, queued, parked } = actual
      if (JSON.stringify(fromEvents) !== JSON.stringify({ live, queued, parked })) {
        disagreements.push(
          `${e.type}#${e.seq}: ${JSON.stringify(fromEvents)} vs ${JSON.stringify(actual)}`,
        )
      }
    })
    const tasks: Task<unknown>[] = []
    for (let i = 0; i < 30; i++) {
      const kind = i % 5
      if (kind === 0) tasks.push(run(runtime, () => i))
      else if (kind === 1) tasks.push(run(runtime, (ctx) => ctx.sleep(3).then(() => i)))
      else if (kind === 2)
        tasks.push(
          run(runtime, () => Promise.reject(new Error('x')), { retry: { attempts: 2, delay: 1 } }),
        )
      else if (kind === 3)
        tasks.push(run(runtime, (ctx) => ctx.sleep(50), { timeout: { attempt: 2 } }))
      else {
        // Ignores its signal: it leaves 20 ms after it started, cancelled or not.
        const doomed = run(
          runtime,
          () => new Promise<void>((done) => clock.setTimeout(() => done(), 20)),
        )
        tasks.push(doomed)
        // A later clock tick ends it.
        clock.setTimeout(() => doomed.cancel(), 4)
      }
    }
    for (let t = 0; t < 200 && counts(runtime).live > 0; t++) await clock.advance(1)
    await Promise.all(tasks.map((task) => settle(task)))
    expect(disagreements).toEqual([])
    expect({ live: kept.live, queued: kept.of('queued'), running: kept.of('running') }).toEqual({
      live: 0,
      queued: 0,
      running: 0,
    })
    expect(counts(runtime).live).toBe(0)
  })
})
