import { describe, expect, it, vi } from 'vitest'
import {
  createRuntime,
  createTaskTag,
  createTestClock,
  inspect,
  type PluginHost,
  run,
  subscribe,
  tagTaskFn,
} from '../src/index.js'
import { gate } from './helpers.js'

// inspect(runtime).tasks[i].since: the clock time at which a live task
// entered its current state, with or without anyone listening to events.

const sinceOf = (runtime: ReturnType<typeof createRuntime>, id: number) =>
  inspect(runtime).tasks.find((t) => t.id === id)?.since

describe.each([{ listening: false }, { listening: true }])(
  'since, listening to events: $listening',
  ({ listening }) => {
    const setup = () => {
      const clock = createTestClock({ now: 1_000 })
      const runtime = createRuntime({ clock, concurrency: 1 })
      if (listening) subscribe(runtime, () => {})
      return { clock, runtime }
    }

    it('is when the task was queued, then when it started running', async () => {
      const { clock, runtime } = setup()
      const first = gate()
      const second = gate()
      const a = run(runtime, () => first.promise)
      await clock.advance(40)
      const b = run(runtime, () => second.promise)
      expect(b.state).toBe('queued')
      expect(sinceOf(runtime, a.id)).toBe(1_000)
      expect(sinceOf(runtime, b.id)).toBe(1_040)
      await clock.advance(25)
      first.open()
      await a
      await Promise.resolve()
      expect(b.state).toBe('running')
      expect(sinceOf(runtime, b.id)).toBe(1_065)
      second.open()
      await b
      expect(inspect(runtime).tasks).toEqual([])
    })

    it('is now for a task inspected from its own dispatch handler, before its first transition', async () => {
      const clock = createTestClock({ now: 1_000 })
      const tag = createTaskTag<{ n: number }>('installPeek')
      const seen: Array<{ state: string; since: number | undefined }> = []
      let runtime: ReturnType<typeof createRuntime> | undefined
      const peek = {
        name: 'installPeek',
        install(host: PluginHost) {
          host.claim(tag, (request) => {
            const mine = inspect(runtime!).tasks.find((t) => t.id === request.task.id)
            seen.push({ state: mine!.state, since: mine?.since })
            return request.proceed()
          })
        },
      }
      runtime = createRuntime({ clock, plugins: [peek] })
      if (listening) subscribe(runtime, () => {})
      await clock.advance(300)
      const task = run(
        runtime,
        tagTaskFn(async () => 'ok', tag, { n: 1 }),
      )
      expect(seen).toEqual([{ state: 'idle', since: 1_300 }])
      expect(await task).toBe('ok')
    })
  },
)

describe('clock readings for since, nobody listening', () => {
  it('a task started at once reads the clock once; one that waits, once when queued and once when started', async () => {
    const clock = createTestClock({ now: 5_000 })
    let reads = 0
    const counted = {
      now: () => {
        reads++
        return clock.now()
      },
      setTimeout: clock.setTimeout,
      clearTimeout: clock.clearTimeout,
    }
    const runtime = createRuntime({ clock: counted, concurrency: 1 })
    const door = gate()
    reads = 0
    const first = run(runtime, () => door.promise)
    expect(first.state).toBe('running')
    expect(reads).toBe(1)
    await clock.advance(10)
    reads = 0
    const waiting = run(runtime, () => 'done')
    expect(waiting.state).toBe('queued')
    expect(reads).toBe(1)
    expect(sinceOf(runtime, waiting.id)).toBe(5_010)
    await clock.advance(5)
    reads = 0
    door.open()
    await first
    expect(await waiting).toBe('done')
    // The waiting task's start; endings read nothing.
    expect(reads).toBe(1)
  })
})

describe('the system clock: the stamps of one synchronous stretch share a reading', () => {
  it('a burst of waiting tasks reads Date.now() once per 16 transitions, and each since is a reading taken during the burst', async () => {
    // Before the first task: its reading may be the one the burst shares.
    const before = Date.now()
    const runtime = createRuntime({ concurrency: 1 })
    const door = gate()
    const first = run(runtime, () => door.promise)
    const reads = vi.spyOn(Date, 'now')
    try {
      const waiting = Array.from({ length: 160 }, (_, i) => run(runtime, () => i))
      const readsInBurst = reads.mock.calls.length
      const after = Date.now()
      // One reading per task without sharing: 160.
      expect(readsInBurst).toBeLessThanOrEqual(10)
      expect(readsInBurst).toBeGreaterThanOrEqual(1)
      for (const task of waiting) {
        expect(task.state).toBe('queued')
        const since = sinceOf(runtime, task.id)!
        expect(since).toBeGreaterThanOrEqual(before)
        expect(since).toBeLessThanOrEqual(after)
      }
      door.open()
      await first
      expect(await Promise.all(waiting)).toEqual(waiting.map((_, i) => i))
    } finally {
      reads.mockRestore()
    }
  })

  it("with a listener, each event's at is a shared reading too, and the task's since is its last event's at", async () => {
    const before = Date.now()
    const runtime = createRuntime({ concurrency: 1 })
    const stamps: number[] = []
    const lastAt = new Map<number, number>()
    subscribe(runtime, (event) => {
      stamps.push(event.at)
      if (event.type === 'task:transition') lastAt.set(event.taskId, event.at)
    })
    const door = gate()
    const first = run(runtime, () => door.promise)
    const reads = vi.spyOn(Date, 'now')
    try {
      const waiting = Array.from({ length: 80 }, (_, i) => run(runtime, () => i))
      // 160 events (created, queued per task): one reading each without sharing.
      expect(reads.mock.calls.length).toBeLessThanOrEqual(10)
      const after = Date.now()
      for (const at of stamps) {
        expect(at).toBeGreaterThanOrEqual(before)
        expect(at).toBeLessThanOrEqual(after)
      }
      for (const task of waiting) expect(sinceOf(runtime, task.id)).toBe(lastAt.get(task.id))
      door.open()
      await first
      expect(await Promise.all(waiting)).toEqual(waiting.map((_, i) => i))
    } finally {
      reads.mockRestore()
    }
  })

  it('a shared reading expires once the stretch is over: a task queued later reads the clock again', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const door = gate()
    const first = run(runtime, () => door.promise)
    // Takes a reading with 15 uses left.
    const early = run(runtime, () => 'early')
    await new Promise((resolve) => setTimeout(resolve, 30))
    const before = Date.now()
    const late = run(runtime, () => 'late')
    expect(late.state).toBe('queued')
    expect(sinceOf(runtime, late.id)).toBeGreaterThanOrEqual(before)
    door.open()
    await first
    expect([await early, await late]).toEqual(['early', 'late'])
  })

  it('a clock of its own is read at every transition, also within one stretch', async () => {
    let now = 0
    const clock = {
      now: () => now,
      setTimeout: (callback: () => void, ms: number) => setTimeout(callback, ms),
      clearTimeout: (handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    }
    const runtime = createRuntime({ clock, concurrency: 1 })
    const door = gate()
    const first = run(runtime, () => door.promise)
    const a = run(runtime, () => 'a')
    now = 7
    const b = run(runtime, () => 'b')
    expect([sinceOf(runtime, a.id), sinceOf(runtime, b.id)]).toEqual([0, 7])
    door.open()
    await first
    expect([await a, await b]).toEqual(['a', 'b'])
  })
})
