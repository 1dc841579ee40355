import {
  createRuntime,
  isCancelledError,
  run,
  type Task,
  type TaskContext,
  type TestClock,
} from '@vega/job-core'
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
  restartCoordinator,
  withCoordinator,
} from '../src/index.js'
import { D, flush, harness } from './support.js'

// Calls whose keys hash the same are peers whatever their coordinator. The
// lanes of serialize and keepLatest keep their calls out of the peer index
// (they list them themselves), so these tests hold every reader of peers —
// `ctx.peers()`, dedupe (both roads), exhaust, restart, inspectCoordination —
// to seeing a lane's calls, admitted and waiting, and nothing else.

const sleeping =
  (value: number, ms = D) =>
  async (ctx: TaskContext): Promise<number> => {
    await ctx.sleep(ms)
    return value
  }

/** A body that never looks at its signal: it stays inside after its task is cancelled. */
const stubborn =
  (clock: TestClock, value: number, ms = D) =>
  async (): Promise<number> => {
    await new Promise<void>((resolve) => clock.setTimeout(resolve, ms))
    return value
  }

/** A coordinator of one's own that records the ids `ctx.peers()` gives it, then proceeds. */
function peersSpy(): { spy: Coordinator; seen: number[][] } {
  const seen: number[][] = []
  const spy = defineCoordinator('spy', (ctx) => {
    seen.push(ctx.peers().map((peer) => peer.id))
    return ctx.proceed()
  })
  return { spy, seen }
}

describe('peers across strategies: a lane’s calls are peers of every call of their key', () => {
  it('ctx.peers() lists serialize calls, admitted and waiting, earliest first; a cancelled body still inside is none', async () => {
    const { clock, runtime } = harness()
    const serialize = createSerializeCoordinator()
    const { spy, seen } = peersSpy()
    const first = run(runtime, withCoordinator(stubborn(clock, 1, 3 * D), serialize, { key: 'k' }))
    const second = run(runtime, withCoordinator(sleeping(2), serialize, { key: 'k' }))
    expect([first.state, second.state]).toEqual(['running', 'parked:coordinator'])
    run(runtime, withCoordinator(sleeping(3), spy, { key: 'k' })) // #3
    run(runtime, withCoordinator(sleeping(4), spy, { key: 'other' })) // #4: another key
    expect(seen).toEqual([[1, 2], []])
    first.cancel()
    // #1 ended but its body is inside: it holds its slot (#2 still waits), yet it is no peer.
    expect(second.state).toBe('parked:coordinator')
    run(runtime, withCoordinator(sleeping(5), spy, { key: 'k' })) // #5
    expect(seen.at(-1)).toEqual([2, 3])
    await clock.runAll()
    expect(await second).toBe(2)
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, tasks: 0, strategyKeys: 0 })
  })

  it('lists keepLatest’s running and waiting calls, and not the one it superseded', async () => {
    const { clock, runtime } = harness()
    const keepLatest = createKeepLatestCoordinator()
    const { spy, seen } = peersSpy()
    const calls = [1, 2, 3].map((value) =>
      run(runtime, withCoordinator(sleeping(value), keepLatest, { key: 'k' })),
    )
    expect(calls.map((task) => task.state)).toEqual(['running', 'cancelled', 'parked:coordinator'])
    run(runtime, withCoordinator(sleeping(4), spy, { key: 'k' }))
    expect(seen).toEqual([[1, 3]])
    await clock.runAll()
    expect(await Promise.all(calls)).toEqual([1, 3, 3])
  })

  it('lists a call handed to serialize by a coordinator of one’s own once', async () => {
    const { clock, runtime } = harness()
    const serialize = createSerializeCoordinator()
    const mine = defineCoordinator('mine', (ctx) => serialize.coordinate(ctx))
    const { spy, seen } = peersSpy()
    run(runtime, withCoordinator(sleeping(1), mine, { key: 'k' }))
    run(runtime, withCoordinator(sleeping(2), serialize, { key: 'k' }))
    run(runtime, withCoordinator(sleeping(3), mine, { key: 'k' }))
    run(runtime, withCoordinator(sleeping(4), spy, { key: 'k' }))
    expect(seen).toEqual([[1, 2, 3]])
    await clock.runAll()
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, tasks: 0, strategyKeys: 0 })
  })

  for (const listening of [false, true]) {
    it(`dedupe follows and exhaust drops against a serialize call (${listening ? 'with' : 'without'} a listener)`, async () => {
      const runtime = listening
        ? harness().runtime
        : createRuntime({ plugins: [installCoordination] })
      const serialize = createSerializeCoordinator()
      const load = withCoordinator(async () => 'loaded', serialize, { key: 'k' })
      const leader = run(runtime, load)
      const waiter = run(runtime, load)
      const merged = run(
        runtime,
        withCoordinator(async () => 'own', dedupeCoordinator, { key: 'k' }),
      )
      const dropped = run(
        runtime,
        withCoordinator(async () => 'own', exhaustCoordinator, { key: 'k' }),
      )
      expect(merged).toMatchObject({
        state: 'cancelled',
        cancelReason: 'dedupe',
        cancelledBy: leader.id,
      })
      expect(dropped).toMatchObject({ state: 'cancelled', cancelReason: 'exhaust-dropped' })
      expect(await merged).toBe('loaded')
      await expect(dropped).rejects.toSatisfy(isCancelledError)
      expect(await waiter).toBe('loaded')
      // With the key's calls settled, the next one has no peer: it runs.
      expect(
        await run(
          runtime,
          withCoordinator(async () => 'own', dedupeCoordinator, { key: 'k' }),
        ),
      ).toBe('own')
      expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, tasks: 0, strategyKeys: 0 })
    })
  }

  it('names the lane call it followed or deferred to in its event', () => {
    const { runtime, coordinationEvents } = harness()
    const serialize = createSerializeCoordinator()
    run(runtime, withCoordinator(sleeping(1), serialize, { key: 'k' }))
    run(runtime, withCoordinator(sleeping(2), dedupeCoordinator, { key: 'k' }))
    run(runtime, withCoordinator(sleeping(3), exhaustCoordinator, { key: 'k' }))
    expect(coordinationEvents()).toEqual([
      { type: 'coordination:reuse', peerId: 1, coordinator: 'dedupe', intentId: 2, hash: '"k"' },
      { type: 'coordination:dropped', peerId: 1, coordinator: 'exhaust', intentId: 3, hash: '"k"' },
    ])
  })

  it('restart cancels the serialize calls of its key, running and waiting, and their lane lets go', async () => {
    const { clock, runtime, coordinationEvents } = harness()
    const serialize = createSerializeCoordinator()
    const running = run(runtime, withCoordinator(sleeping(1), serialize, { key: 'k' }))
    const waiting = run(runtime, withCoordinator(sleeping(2), serialize, { key: 'k' }))
    const restart = run(runtime, withCoordinator(sleeping(3), restartCoordinator, { key: 'k' }))
    for (const task of [running, waiting]) {
      expect(task).toMatchObject({
        state: 'cancelled',
        cancelReason: 'abort',
        cancelledBy: restart.id,
      })
    }
    expect(coordinationEvents()).toContainEqual(
      expect.objectContaining({ type: 'coordination:restart', cancelledPeerIds: [1, 2] }),
    )
    const outcomes = await Promise.allSettled([running, waiting])
    expect(outcomes.every((o) => o.status === 'rejected' && isCancelledError(o.reason))).toBe(true)
    await clock.runAll()
    expect(await restart).toBe(3)
    await flush()
    expect(inspectCoordination(runtime)).toMatchObject({
      keys: 0,
      tasks: 0,
      strategyKeys: 0,
      waiters: 0,
    })
  })

  it('inspectCoordination counts a key only a lane uses, and every call not settled yet', async () => {
    const { clock, runtime } = harness()
    const serialize = createSerializeCoordinator()
    const tasks: Task<number>[] = []
    for (const key of ['a', 'a', 'a', 'b']) {
      tasks.push(run(runtime, withCoordinator(sleeping(1), serialize, { key })))
    }
    expect(inspectCoordination(runtime)).toEqual({
      installed: true,
      keys: 2,
      tasks: 4,
      strategyKeys: 2,
      waiters: 2,
    })
    await clock.runAll()
    await Promise.all(tasks)
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, tasks: 0, strategyKeys: 0 })
  })
})
