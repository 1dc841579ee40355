// The facts table, rows exhaust / bounded(2) / bounded(1) / forgetful (the seed's lab/facts §5–§6).
import { createRuntime, createTestClock, isCancelledError, run, settle } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import {
  type Coordinator,
  dedupeCoordinator,
  defineCoordinator,
  exhaustCoordinator,
  installCoordination,
  keepLatestCoordinator,
  withCoordinator,
} from '../src/index.js'
import { D, HASH_K, runFacts } from './support.js'

/** The custom coordinator of the seed's §6: proceed below `limit` live peers, else reuse the earliest. */
const bounded = (limit: number): Coordinator =>
  defineCoordinator('bounded', (ctx) => {
    const peers = ctx.peers()
    return peers.length < limit ? ctx.proceed() : ctx.reuse(peers[0]!)
  })

/** Decides nothing: the orphan guard must catch every call. */
const forgetful: Coordinator = defineCoordinator('forgetful', () => {})

describe('§5 exhaust', () => {
  it('runs 1 body; #2–#4 are dropped (exhaust-dropped) and reject, not sharing #1’s value', async () => {
    const facts = await runFacts(exhaustCoordinator)
    expect(facts.bodies).toEqual([{ call: 1, at: 0 }])
    expect(facts.tasks).toEqual([
      { state: 'success' },
      { state: 'cancelled', reason: 'exhaust-dropped' },
      { state: 'cancelled', reason: 'exhaust-dropped' },
      { state: 'cancelled', reason: 'exhaust-dropped' },
    ])
    expect(facts.promises).toEqual([
      { status: 'resolved', value: 1, at: D },
      { status: 'rejected', reason: 'exhaust-dropped', at: 0 },
      { status: 'rejected', reason: 'exhaust-dropped', at: 0 },
      { status: 'rejected', reason: 'exhaust-dropped', at: 0 },
    ])
    expect(facts.events).toEqual(
      [2, 3, 4].map((intentId) => ({
        type: 'coordination:dropped',
        coordinator: 'exhaust',
        intentId,
        hash: HASH_K,
        peerId: 1,
      })),
    )
  })

  it('leaves the dropped calls untouched by the peer’s failure', async () => {
    const clock = createTestClock()
    const runtime = createRuntime({ clock, plugins: [installCoordination] })
    const failing = withCoordinator(
      async (ctx) => {
        await ctx.sleep(D)
        throw new Error('boom')
      },
      exhaustCoordinator,
      { key: 'submit' },
    )
    const first = run(runtime, failing)
    const dropped = [run(runtime, failing), run(runtime, failing)]
    const droppedErrors = dropped.map((task) => task.promise.catch((error: unknown) => error))
    const firstError = first.promise.catch((error: unknown) => error)
    await clock.advance(D)
    expect(((await firstError) as Error).message).toBe('boom')
    for (const error of await Promise.all(droppedErrors)) {
      expect(isCancelledError(error) && error.reason).toBe('exhaust-dropped')
    }
    expect((await settle(first)).status).toBe('error')
    expect(dropped.map((task) => task.cancelReason)).toEqual(['exhaust-dropped', 'exhaust-dropped'])
  })
})

describe('keepLatest (the same scenario, for the README’s table)', () => {
  it('runs #1 then #4; #2, #3 superseded, settling with #4’s value; queued ×3', async () => {
    const facts = await runFacts(keepLatestCoordinator)
    expect(facts.bodies).toEqual([
      { call: 1, at: 0 },
      { call: 4, at: D },
    ])
    expect(facts.tasks).toEqual([
      { state: 'success' },
      { state: 'cancelled', reason: 'superseded', cancelledBy: 3 },
      { state: 'cancelled', reason: 'superseded', cancelledBy: 4 },
      { state: 'success' },
    ])
    expect(facts.promises).toEqual([
      { status: 'resolved', value: 1, at: D },
      { status: 'resolved', value: 4, at: 2 * D },
      { status: 'resolved', value: 4, at: 2 * D },
      { status: 'resolved', value: 4, at: 2 * D },
    ])
    expect(facts.events).toEqual(
      [2, 3, 4].map((intentId) => ({
        type: 'coordination:queued',
        coordinator: 'keepLatest',
        intentId,
        hash: HASH_K,
        position: 0,
      })),
    )
  })
})

describe('§6 custom coordinators', () => {
  it('bounded(2): 2 bodies; #3, #4 cancelled/dedupe resolve to #1’s value; reuse ×2 stamped bounded', async () => {
    const facts = await runFacts(bounded(2))
    expect(facts.bodies).toEqual([
      { call: 1, at: 0 },
      { call: 2, at: 0 },
    ])
    expect(facts.tasks).toEqual([
      { state: 'success' },
      { state: 'success' },
      { state: 'cancelled', reason: 'dedupe', cancelledBy: 1 },
      { state: 'cancelled', reason: 'dedupe', cancelledBy: 1 },
    ])
    expect(facts.promises).toEqual([
      { status: 'resolved', value: 1, at: D },
      { status: 'resolved', value: 2, at: D },
      { status: 'resolved', value: 1, at: D },
      { status: 'resolved', value: 1, at: D },
    ])
    expect(facts.events).toEqual([
      { type: 'coordination:reuse', coordinator: 'bounded', intentId: 3, hash: HASH_K, peerId: 1 },
      { type: 'coordination:reuse', coordinator: 'bounded', intentId: 4, hash: HASH_K, peerId: 1 },
    ])
  })

  it('bounded(1) reproduces the dedupe row cell for cell', async () => {
    const one = await runFacts(bounded(1))
    const dedupe = await runFacts(dedupeCoordinator)
    expect(one.bodies).toEqual(dedupe.bodies)
    expect(one.tasks).toEqual(dedupe.tasks)
    expect(one.promises).toEqual(dedupe.promises)
    expect(one.settleOrder).toEqual(dedupe.settleOrder)
    expect(one.events.map((e) => ({ ...e, coordinator: 'dedupe' }))).toEqual(dedupe.events)
    expect(one.events.every((e) => e.coordinator === 'bounded')).toBe(true)
    expect(one.events).toHaveLength(3)
  })

  // dedupe and exhaust decide on a fast path inside the adapter; their
  // public `coordinate(ctx)` (for a coordinator that delegates) must agree cell
  // for cell (test/fast-path.test.ts checks random sequences too).
  it.each([
    ['dedupe', dedupeCoordinator],
    ['exhaust', exhaustCoordinator],
  ] as const)(
    '%s through its public coordinate(ctx) reproduces its own row',
    async (name, builtin) => {
      const delegating = defineCoordinator(name, (ctx) => builtin.coordinate(ctx))
      const viaCtx = await runFacts(delegating)
      const direct = await runFacts(builtin)
      expect(viaCtx.bodies).toEqual(direct.bodies)
      expect(viaCtx.tasks).toEqual(direct.tasks)
      expect(viaCtx.promises).toEqual(direct.promises)
      expect(viaCtx.settleOrder).toEqual(direct.settleOrder)
      expect(viaCtx.events).toEqual(direct.events)
      expect(direct.all.map(({ type }) => type)).toEqual(viaCtx.all.map(({ type }) => type))
    },
  )

  it('forgetful: 0 bodies; all cancelled/orphaned-intent; all promises resolve to undefined', async () => {
    const facts = await runFacts(forgetful)
    expect(facts.bodies).toEqual([])
    expect(facts.tasks).toEqual([
      { state: 'cancelled', reason: 'orphaned-intent' },
      { state: 'cancelled', reason: 'orphaned-intent' },
      { state: 'cancelled', reason: 'orphaned-intent' },
      { state: 'cancelled', reason: 'orphaned-intent' },
    ])
    expect(facts.promises).toEqual([
      { status: 'resolved', value: undefined, at: 0 },
      { status: 'resolved', value: undefined, at: 0 },
      { status: 'resolved', value: undefined, at: 0 },
      { status: 'resolved', value: undefined, at: 0 },
    ])
    expect(facts.events).toEqual(
      [1, 2, 3, 4].map((intentId) => ({
        type: 'coordination:orphaned-intent',
        coordinator: 'forgetful',
        intentId,
        hash: HASH_K,
      })),
    )
  })
})
