import { cancelAll, run, type TaskContext } from '@vega/job-core'
import { afterEach, beforeEach, expect, it } from 'vitest'
import {
  createSerializeCoordinator,
  dedupeCoordinator,
  defineCoordinator,
  exhaustCoordinator,
  keepLatestCoordinator,
  restartCoordinator,
  withCoordinator,
} from '../src/index.js'
import { D, flush, harness } from './support.js'

const unhandled: unknown[] = []
const listener = (reason: unknown) => {
  unhandled.push(reason)
}

beforeEach(() => {
  unhandled.length = 0
  process.on('unhandledRejection', listener)
})

afterEach(() => {
  process.off('unhandledRejection', listener)
})

it('no unhandledRejection from dropped, deduped, restarted, superseded, disposed or failing calls nobody awaits', async () => {
  // The two broken coordinators fail their calls, which nobody awaits: each is
  // reported once, to this handler rather than to the console.
  const reported: unknown[] = []
  const { clock, runtime } = harness({
    onUnobservedError: (error) => {
      reported.push(error)
    },
  })
  const failing = async (ctx: TaskContext) => {
    await ctx.sleep(D)
    throw new Error('nobody listens')
  }
  const serialize = createSerializeCoordinator()
  const coordinators = [
    dedupeCoordinator,
    restartCoordinator,
    exhaustCoordinator,
    keepLatestCoordinator,
    serialize.coordinator,
    defineCoordinator('forgetful', () => {}),
    defineCoordinator('thrower', () => {
      throw new Error('coordinator bug')
    }),
    defineCoordinator('sour', () => Promise.reject(new Error('async coordinator bug'))),
  ]
  // Nothing below is awaited or caught: every call is fire-and-forget.
  for (const coordinator of coordinators) {
    const fn = withCoordinator(failing, coordinator, { key: coordinator.name })
    for (let i = 0; i < 4; i++) run(runtime, fn)
  }
  const keep = withCoordinator(failing, keepLatestCoordinator, { key: 'parked' })
  run(runtime, keep)
  run(runtime, keep)
  run(runtime, keep).cancel()
  const queued = withCoordinator(failing, serialize.coordinator, { key: 'to-dispose' })
  run(runtime, queued)
  run(runtime, queued)
  run(runtime, queued)
  serialize.dispose()
  run(runtime, queued)
  await clock.advance(D / 2)
  cancelAll(runtime)
  await clock.runAll()
  for (let i = 0; i < 5; i++) await flush()
  expect(unhandled).toEqual([])
  expect(reported.map((error) => (error as Error).message).sort()).toEqual([
    ...Array(4).fill('async coordinator bug'),
    ...Array(4).fill('coordinator bug'),
  ])
})
