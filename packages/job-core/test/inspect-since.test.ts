import { describe, expect, it } from 'vitest'
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
