import { createRuntime, inspect, run, type Task, type TaskContext } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import {
  type Coordinator,
  createKeepLatestCoordinator,
  createSerializeCoordinator,
  dedupeCoordinator,
  defineCoordinator,
  exhaustCoordinator,
  inspectCoordination,
  installCoordination,
  keepLatestCoordinator,
  restartCoordinator,
  withCoordinator,
} from '../src/index.js'
import { D, harness } from './support.js'

// 10k in pnpm test; pnpm test:leaks runs 100k (LEAK_KEYS).
const KEYS = Number(process.env.LEAK_KEYS ?? 10_000)

const strategies: [string, () => Coordinator][] = [
  ['dedupe', () => dedupeCoordinator],
  ['restart', () => restartCoordinator],
  ['serialize', () => createSerializeCoordinator().coordinator],
  ['exhaust', () => exhaustCoordinator],
  ['keepLatest', () => keepLatestCoordinator],
  ['keepLatest(2)', () => createKeepLatestCoordinator({ concurrency: 2 })],
  ['forgetful', () => defineCoordinator('forgetful', () => {})],
]

const body = async (ctx: TaskContext): Promise<number> => {
  await ctx.sleep(D)
  return ctx.taskId
}

describe(`${KEYS} distinct keys leave no per-key state`, () => {
  it.each(strategies)(
    '%s',
    async (_name, make) => {
      // No listener and no timers: this measures state, not the event log or the test clock.
      const runtime = createRuntime({ plugins: [installCoordination] })
      const coordinator = make()
      let open!: () => void
      const gate = new Promise<void>((resolve) => (open = resolve))
      const body = async (): Promise<number> => {
        await gate
        return 1
      }
      const tasks: Task<number>[] = []
      for (let key = 0; key < KEYS; key++) {
        const taskFn = withCoordinator(body, coordinator, { key: ['k', key] })
        tasks.push(run(runtime, taskFn))
        // Every 10th key gets a second call, so each strategy also takes its peer
        // path (reuse, restart, queue, drop, wait) on thousands of keys.
        if (key % 10 === 0) tasks.push(run(runtime, taskFn))
      }
      // While bodies wait, the peer index holds exactly the live tasks, one key each at most.
      const during = inspectCoordination(runtime)
      expect(during.tasks).toBe(inspect(runtime).sizes.liveTasks)
      expect(during.keys).toBeLessThanOrEqual(KEYS)
      open()
      await Promise.allSettled(tasks.map((task) => task.promise))
      expect(inspectCoordination(runtime)).toEqual({
        installed: true,
        keys: 0,
        tasks: 0,
        strategyKeys: 0,
        waiters: 0,
      })
      const { sizes } = inspect(runtime)
      expect(sizes.liveTasks).toBe(0)
      expect(sizes.queued).toBe(0)
      expect(sizes.runningBodies).toBe(0)
    },
    120_000,
  )
})

describe('inspectCoordination', () => {
  it('counts live keys, tracked tasks, strategy keys and waiters while work is in flight', async () => {
    const { clock, runtime } = harness()
    const serialize = createSerializeCoordinator()
    for (const key of ['a', 'b']) {
      for (let i = 0; i < 3; i++) {
        run(runtime, withCoordinator(body, serialize.coordinator, { key }))
      }
    }
    expect(inspectCoordination(runtime)).toEqual({
      installed: true,
      keys: 2,
      tasks: 6,
      strategyKeys: 2,
      waiters: 4,
    })
    await clock.runAll()
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, tasks: 0, strategyKeys: 0 })
  })

  it('refuses something that is not a runtime', () => {
    expect(() => inspectCoordination(undefined as never)).toThrow(TypeError)
  })

  it('reports a runtime without the plugin as not installed', () => {
    expect(inspectCoordination(createRuntime())).toEqual({
      installed: false,
      keys: 0,
      tasks: 0,
      strategyKeys: 0,
      waiters: 0,
    })
  })
})
