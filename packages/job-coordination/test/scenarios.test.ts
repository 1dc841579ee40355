// The facts table, rows none / dedupe / restart / serialize (the seed's core/scenarios §1–§4):
// four calls with one key issued back-to-back, body `await ctx.sleep(D); return i`.
import { describe, expect, it } from 'vitest'
import { createSerializeCoordinator, dedupeCoordinator, restartCoordinator } from '../src/index.js'
import { D, HASH_K, runFacts } from './support.js'

describe('§1 none (plain run)', () => {
  it('runs 4 bodies at once; each call gets its own value; no coordination event', async () => {
    const facts = await runFacts(undefined)
    expect(facts.bodies).toEqual([
      { call: 1, at: 0 },
      { call: 2, at: 0 },
      { call: 3, at: 0 },
      { call: 4, at: 0 },
    ])
    expect(facts.tasks).toEqual([
      { state: 'success' },
      { state: 'success' },
      { state: 'success' },
      { state: 'success' },
    ])
    expect(facts.promises).toEqual([
      { status: 'resolved', value: 1, at: D },
      { status: 'resolved', value: 2, at: D },
      { status: 'resolved', value: 3, at: D },
      { status: 'resolved', value: 4, at: D },
    ])
    expect(facts.events).toEqual([])
  })
})

describe('§2 dedupe', () => {
  it('runs 1 body; #2–#4 end cancelled/dedupe yet resolve to #1’s value; reuse ×3', async () => {
    const facts = await runFacts(dedupeCoordinator)
    expect(facts.bodies).toEqual([{ call: 1, at: 0 }])
    expect(facts.tasks).toEqual([
      { state: 'success' },
      { state: 'cancelled', reason: 'dedupe', cancelledBy: 1 },
      { state: 'cancelled', reason: 'dedupe', cancelledBy: 1 },
      { state: 'cancelled', reason: 'dedupe', cancelledBy: 1 },
    ])
    expect(facts.promises).toEqual([
      { status: 'resolved', value: 1, at: D },
      { status: 'resolved', value: 1, at: D },
      { status: 'resolved', value: 1, at: D },
      { status: 'resolved', value: 1, at: D },
    ])
    expect(facts.events).toEqual([
      { type: 'coordination:reuse', coordinator: 'dedupe', intentId: 2, hash: HASH_K, peerId: 1 },
      { type: 'coordination:reuse', coordinator: 'dedupe', intentId: 3, hash: HASH_K, peerId: 1 },
      { type: 'coordination:reuse', coordinator: 'dedupe', intentId: 4, hash: HASH_K, peerId: 1 },
    ])
  })
})

describe('§3 restart', () => {
  it('runs 4 bodies; #1–#3 cancelled/abort at once by the next call, #4 succeeds', async () => {
    const facts = await runFacts(restartCoordinator)
    // Every call really started: the body runs synchronously inside run().
    expect(facts.bodies).toEqual([
      { call: 1, at: 0 },
      { call: 2, at: 0 },
      { call: 3, at: 0 },
      { call: 4, at: 0 },
    ])
    expect(facts.tasks).toEqual([
      { state: 'cancelled', reason: 'abort', cancelledBy: 2 },
      { state: 'cancelled', reason: 'abort', cancelledBy: 3 },
      { state: 'cancelled', reason: 'abort', cancelledBy: 4 },
      { state: 'success' },
    ])
    expect(facts.promises).toEqual([
      { status: 'rejected', reason: 'abort', at: 0 },
      { status: 'rejected', reason: 'abort', at: 0 },
      { status: 'rejected', reason: 'abort', at: 0 },
      { status: 'resolved', value: 4, at: D },
    ])
    expect(facts.events).toEqual([
      {
        type: 'coordination:restart',
        coordinator: 'restart',
        intentId: 2,
        hash: HASH_K,
        cancelledPeerIds: [1],
      },
      {
        type: 'coordination:restart',
        coordinator: 'restart',
        intentId: 3,
        hash: HASH_K,
        cancelledPeerIds: [2],
      },
      {
        type: 'coordination:restart',
        coordinator: 'restart',
        intentId: 4,
        hash: HASH_K,
        cancelledPeerIds: [3],
      },
    ])
  })

  it('reports what each cancelled body threw (an AbortError from sleep) on task:exited, not on the promise', async () => {
    const facts = await runFacts(restartCoordinator)
    const exited = facts.all.flatMap((event) =>
      event.type === 'task:exited'
        ? [{ taskId: event.taskId, threw: (event.threw as Error | undefined)?.name }]
        : [],
    )
    expect(exited).toEqual([
      { taskId: 1, threw: 'AbortError' },
      { taskId: 2, threw: 'AbortError' },
      { taskId: 3, threw: 'AbortError' },
    ])
    // The promises carry the CancelledError, never the body's AbortError.
    expect(facts.promises.slice(0, 3).map((p) => p.reason)).toEqual(['abort', 'abort', 'abort'])
  })

  it('names the restarting task in task:transition (cancelledBy) as well as in task.cancelledBy', async () => {
    const facts = await runFacts(restartCoordinator)
    const cancellations = facts.all.flatMap((event) =>
      event.type === 'task:transition' && event.to === 'cancelled'
        ? [{ taskId: event.taskId, reason: event.reason, cancelledBy: event.cancelledBy }]
        : [],
    )
    expect(cancellations).toEqual([
      { taskId: 1, reason: 'abort', cancelledBy: 2 },
      { taskId: 2, reason: 'abort', cancelledBy: 3 },
      { taskId: 3, reason: 'abort', cancelledBy: 4 },
    ])
  })
})

describe('§4 serialize', () => {
  it('runs 4 bodies one after another in call order; each gets its own value; total 4·D; queued ×3', async () => {
    const serialize = createSerializeCoordinator()
    const facts = await runFacts(serialize.coordinator)
    expect(facts.bodies).toEqual([
      { call: 1, at: 0 },
      { call: 2, at: D },
      { call: 3, at: 2 * D },
      { call: 4, at: 3 * D },
    ])
    expect(facts.tasks).toEqual([
      { state: 'success' },
      { state: 'success' },
      { state: 'success' },
      { state: 'success' },
    ])
    expect(facts.promises).toEqual([
      { status: 'resolved', value: 1, at: D },
      { status: 'resolved', value: 2, at: 2 * D },
      { status: 'resolved', value: 3, at: 3 * D },
      { status: 'resolved', value: 4, at: 4 * D },
    ])
    expect(facts.settleOrder).toEqual([1, 2, 3, 4])
    expect(facts.events).toEqual([
      {
        type: 'coordination:queued',
        coordinator: 'serialize',
        intentId: 2,
        hash: HASH_K,
        position: 0,
      },
      {
        type: 'coordination:queued',
        coordinator: 'serialize',
        intentId: 3,
        hash: HASH_K,
        position: 1,
      },
      {
        type: 'coordination:queued',
        coordinator: 'serialize',
        intentId: 4,
        hash: HASH_K,
        position: 2,
      },
    ])
  })

  it('parks waiters in parked:coordinator until released', async () => {
    const serialize = createSerializeCoordinator()
    const facts = await runFacts(serialize.coordinator)
    const path = (taskId: number) =>
      facts.all.flatMap((event) =>
        event.type === 'task:transition' && event.taskId === taskId ? [event.to] : [],
      )
    expect(path(1)).toEqual(['queued', 'running', 'success'])
    expect(path(2)).toEqual(['parked:coordinator', 'queued', 'running', 'success'])
  })
})
