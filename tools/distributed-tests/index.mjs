// The facts every cross-process engine reproduces with all its calls in one
// process (the local strategies' table: bodies, task states, promises,
// events), measured on a real server in real time. An engine's test file
// calls describeFactsInOneProcess with how to make a fresh runtime on it.

import { withCoordinator } from '@vega/job-coordination'
import { inspect, isCancelledError, run } from '@vega/job-core'
import { describe, expect, it } from 'vitest'

/** How long each body sleeps (ms). */
export const D = 60
const HASH = '"k"'

/** Four calls (or `calls`) with one key back-to-back in one synchronous block. */
export async function runFacts({ runtime, events }, coordinator, calls = 4) {
  const bodies = []
  let inside = 0
  let maxInside = 0
  const body = (call) => async (ctx) => {
    bodies.push(call)
    inside++
    maxInside = Math.max(maxInside, inside)
    try {
      await ctx.sleep(D)
      return call
    } finally {
      inside--
    }
  }
  const seen = events.length
  const tasks = []
  for (let call = 1; call <= calls; call++) {
    tasks.push(run(runtime, withCoordinator(body(call), coordinator, { key: 'k' })))
  }
  const settleOrder = []
  const promises = await Promise.all(
    tasks.map((task, index) =>
      task.promise.then(
        (value) => {
          settleOrder.push(index + 1)
          return { status: 'resolved', value }
        },
        (error) => {
          settleOrder.push(index + 1)
          return isCancelledError(error)
            ? { status: 'rejected', reason: error.reason }
            : { status: 'rejected', error }
        },
      ),
    ),
  )
  await whenExited(runtime)
  return {
    bodies,
    maxInside,
    tasks: tasks.map((task) => {
      const fact = { state: task.state }
      if (task.cancelReason !== undefined) fact.reason = task.cancelReason
      if (task.cancelledBy !== undefined) fact.cancelledBy = task.cancelledBy
      return fact
    }),
    promises,
    settleOrder,
    events: events
      .slice(seen)
      .filter((event) => event.type.startsWith('coordination:'))
      .map(({ seq: _seq, at: _at, ...rest }) => rest),
  }
}

/** Resolves when no body runs in `runtime` (bodies that ignore their signal included). */
export async function whenExited(runtime) {
  for (let i = 0; i < 400; i++) {
    const { sizes } = inspect(runtime)
    if (sizes.runningBodies === 0 && sizes.liveTasks === 0) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('bodies still running after 4 s')
}

/**
 * Registers the table's tests for one engine. `fresh()` makes a runtime with
 * the engine's plugin on a fresh namespace: { runtime, events, coordination };
 * `noHoldersLeft(value)` shuts it down and checks that the key is held by
 * nobody and its fence is kept.
 */
export function describeFactsInOneProcess({ engine, fresh, noHoldersLeft }) {
  describe(`the local strategies' facts, every call in one process, on ${engine}`, () => {
    it('dedupe: 1 body; #2–#4 cancelled dedupe (cancelledBy 1) resolve to #1’s value; reuse ×3', async () => {
      const s = fresh()
      const facts = await runFacts(s, s.coordination.dedupe)
      expect(facts.bodies).toEqual([1])
      expect(facts.tasks).toEqual([
        { state: 'success' },
        ...[2, 3, 4].map(() => ({ state: 'cancelled', reason: 'dedupe', cancelledBy: 1 })),
      ])
      expect(facts.promises.map((p) => p.status === 'resolved' && p.value)).toEqual([1, 1, 1, 1])
      expect(facts.events).toEqual(
        [2, 3, 4].map((intentId) => ({
          type: 'coordination:reuse',
          coordinator: 'dedupe',
          intentId,
          hash: HASH,
          peerId: 1,
        })),
      )
      await noHoldersLeft(s)
    })

    it('restart: 4 bodies start; #1–#3 cancelled abort and reject, #4 resolves; restart ×3 naming the one before', async () => {
      const s = fresh()
      const facts = await runFacts(s, s.coordination.restart)
      expect(facts.bodies).toEqual([1, 2, 3, 4])
      expect(facts.tasks).toEqual([
        ...[2, 3, 4].map((by) => ({ state: 'cancelled', reason: 'abort', cancelledBy: by })),
        { state: 'success' },
      ])
      expect(facts.promises).toEqual([
        ...[1, 2, 3].map(() => ({ status: 'rejected', reason: 'abort' })),
        { status: 'resolved', value: 4 },
      ])
      expect(facts.settleOrder).toEqual([1, 2, 3, 4])
      expect(facts.events).toEqual(
        [2, 3, 4].map((intentId) => ({
          type: 'coordination:restart',
          coordinator: 'restart',
          intentId,
          hash: HASH,
          cancelledPeerIds: [intentId - 1],
        })),
      )
      await noHoldersLeft(s)
    })

    it('serialize: 4 bodies one after another in call order, never overlapping; queued ×3 (positions 0, 1, 2)', async () => {
      const s = fresh()
      const facts = await runFacts(s, s.coordination.serialize)
      expect(facts.bodies).toEqual([1, 2, 3, 4])
      expect(facts.maxInside).toBe(1)
      expect(facts.tasks).toEqual([1, 2, 3, 4].map(() => ({ state: 'success' })))
      expect(facts.promises.map((p) => p.status === 'resolved' && p.value)).toEqual([1, 2, 3, 4])
      expect(facts.settleOrder).toEqual([1, 2, 3, 4])
      expect(facts.events).toEqual(
        [2, 3, 4].map((intentId) => ({
          type: 'coordination:queued',
          coordinator: 'serialize',
          intentId,
          hash: HASH,
          position: intentId - 2,
        })),
      )
      await noHoldersLeft(s)
    })

    it('exhaust: 1 body; #2–#4 cancelled exhaust-dropped and reject without #1’s value; no events', async () => {
      const s = fresh()
      const facts = await runFacts(s, s.coordination.exhaust)
      expect(facts.bodies).toEqual([1])
      expect(facts.tasks).toEqual([
        { state: 'success' },
        ...[2, 3, 4].map(() => ({ state: 'cancelled', reason: 'exhaust-dropped' })),
      ])
      expect(facts.promises).toEqual([
        { status: 'resolved', value: 1 },
        ...[2, 3, 4].map(() => ({ status: 'rejected', reason: 'exhaust-dropped' })),
      ])
      expect(facts.settleOrder).toEqual([2, 3, 4, 1])
      expect(facts.events).toEqual([])
      await noHoldersLeft(s)
    })

    it('keepLatest: #1 then #4; #2, #3 superseded (by the next) settle with #4’s value; queued ×3 at position 0', async () => {
      const s = fresh()
      const facts = await runFacts(s, s.coordination.keepLatest)
      expect(facts.bodies).toEqual([1, 4])
      expect(facts.maxInside).toBe(1)
      expect(facts.tasks).toEqual([
        { state: 'success' },
        { state: 'cancelled', reason: 'superseded', cancelledBy: 3 },
        { state: 'cancelled', reason: 'superseded', cancelledBy: 4 },
        { state: 'success' },
      ])
      expect(facts.promises.map((p) => p.status === 'resolved' && p.value)).toEqual([1, 4, 4, 4])
      expect(facts.events).toEqual(
        [2, 3, 4].map((intentId) => ({
          type: 'coordination:queued',
          coordinator: 'keepLatest',
          intentId,
          hash: HASH,
          position: 0,
        })),
      )
      await noHoldersLeft(s)
    })

    it('dedupe is not a cache: once the leader settled, the next call runs again', async () => {
      const s = fresh()
      const first = await runFacts(s, s.coordination.dedupe, 1)
      const second = await runFacts(s, s.coordination.dedupe, 1)
      expect(first.bodies).toEqual([1])
      expect(second.bodies).toEqual([1])
      await noHoldersLeft(s)
    })
  })
}

/**
 * A serialize holder of `key` whose body takes its fencing token, waits for
 * `release()`, then asserts its lease: a storage restarted while it waits
 * shows whether the lease survived. `context()` is its body's context once
 * it runs.
 */
export function gatedHolder({ runtime, serialize, key, fencingToken, assertLease }) {
  let context
  let release
  const gate = new Promise((resolve) => {
    release = resolve
  })
  const holder = run(
    runtime,
    withCoordinator(
      async (ctx) => {
        context = ctx
        const token = await fencingToken(ctx)
        await gate
        await assertLease(ctx)
        return token
      },
      serialize,
      { key },
    ),
  )
  return { holder, context: () => context, release: () => release() }
}
