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
