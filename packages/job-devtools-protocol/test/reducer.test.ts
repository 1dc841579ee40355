import { describe, expect, it } from 'vitest'
import {
  type Envelope,
  initialState,
  reduce,
  reduceAll,
  session,
  timeline,
  timelines,
} from '../src/index.js'
import { producer } from './support/envelopes.js'

const hello = { type: 'session:hello', minor: 0, capabilities: ['request-snapshot'] } as const
const snapshot = (upToSeq: number, tasks: unknown[] = []) =>
  ({ type: 'session:snapshot', upToSeq, tasks }) as const

function lifecycle() {
  const p = producer()
  return [
    p.next(hello),
    p.next(snapshot(1)),
    p.next({ type: 'task:created', taskId: 1, label: 'load', key: '"k"' }),
    p.next({ type: 'task:transition', taskId: 1, from: 'idle', to: 'queued', attempt: 0 }),
    p.next({ type: 'task:transition', taskId: 1, from: 'queued', to: 'running', attempt: 1 }),
    p.next({
      type: 'task:retry',
      taskId: 1,
      attempt: 1,
      delay: 100,
      error: { __type: 'Error', name: 'Error', message: 'flaky' },
    }),
    p.next({ type: 'task:transition', taskId: 1, from: 'running', to: 'parked:retry', attempt: 1 }),
    p.next({ type: 'task:transition', taskId: 1, from: 'parked:retry', to: 'queued', attempt: 1 }),
    p.next({ type: 'task:transition', taskId: 1, from: 'queued', to: 'running', attempt: 2 }),
    p.next({ type: 'task:transition', taskId: 1, from: 'running', to: 'success', attempt: 2 }),
  ]
}

describe('reduce', () => {
  it('builds a session and an ordered per-task timeline', () => {
    const state = reduceAll(lifecycle())
    const current = session(state, 's1')
    expect(current).toMatchObject({
      sid: 's1',
      src: { runtime: 'test', lib: 'test@0' },
      minor: 0,
      capabilities: ['request-snapshot'],
      lastSeq: 10,
      stale: false,
      unknownEvents: 0,
    })
    const task = timeline(state, 's1', 1)
    expect(task).toMatchObject({ id: 1, label: 'load', key: '"k"', state: 'success', attempt: 2 })
    expect(
      task?.entries.map((e) => (e.kind === 'transition' ? `${e.from}>${e.to}` : e.kind)),
    ).toEqual([
      'created',
      'idle>queued',
      'queued>running',
      'retry',
      'running>parked:retry',
      'parked:retry>queued',
      'queued>running',
      'running>success',
    ])
    expect(task?.since).toBe(100)
  })

  it('is pure: the input state is never modified, and untouched tasks are shared', () => {
    const envelopes = lifecycle()
    const before = reduceAll(envelopes.slice(0, 4))
    const frozen = JSON.stringify(before)
    const after = reduce(before, envelopes[4] as Envelope)
    expect(JSON.stringify(before)).toBe(frozen)
    expect(after).not.toBe(before)

    const p = producer('s2')
    const two = reduceAll([
      p.next(hello),
      p.next({ type: 'task:created', taskId: 1 }),
      p.next({ type: 'task:created', taskId: 2 }),
    ])
    const next = reduce(
      two,
      p.next({ type: 'task:transition', taskId: 2, from: 'idle', to: 'queued', attempt: 0 }),
    )
    expect(next.sessions.s2?.tasks['1']).toBe(two.sessions.s2?.tasks['1'])
    expect(next.sessions.s2?.tasks['2']).not.toBe(two.sessions.s2?.tasks['2'])
  })

  it('ignores duplicates by seq, returning the same state object', () => {
    const envelopes = lifecycle()
    const state = reduceAll(envelopes)
    expect(reduce(state, envelopes[3] as Envelope)).toBe(state)
    expect(reduceAll([...envelopes, ...envelopes])).toEqual(state)
  })

  it('marks the session stale on an unannounced jump, until a snapshot arrives', () => {
    const p = producer()
    let state = reduceAll([p.next(hello), p.next(snapshot(1))])
    p.skip(3)
    state = reduce(state, p.next({ type: 'task:created', taskId: 9, label: 'late' }))
    expect(session(state, 's1')).toMatchObject({
      stale: true,
      gaps: [{ fromSeq: 3, toSeq: 5, reason: 'missed' }],
    })
    state = reduce(
      state,
      p.next(snapshot(6, [{ id: 9, label: 'late', state: 'running', attempt: 1, since: 55 }])),
    )
    expect(session(state, 's1')?.stale).toBe(false)
    expect(timeline(state, 's1', 9)).toMatchObject({ state: 'running', attempt: 1, since: 55 })
  })

  it('marks the session stale on an announced gap whose envelope stands in place of the last lost seq', () => {
    const p = producer()
    const start = [p.next(hello), p.next(snapshot(1))]
    const gap = p.at(6, { type: 'session:gap', fromSeq: 3, toSeq: 6, reason: 'overflow' })
    const state = reduceAll([...start, gap])
    expect(session(state, 's1')).toMatchObject({
      lastSeq: 6,
      stale: true,
      gaps: [{ fromSeq: 3, toSeq: 6, reason: 'overflow' }],
    })
  })

  it('treats a session first seen mid-stream as stale', () => {
    const p = producer()
    p.skip(10)
    const state = reduce(initialState(), p.next({ type: 'task:created', taskId: 3 }))
    expect(session(state, 's1')).toMatchObject({
      stale: true,
      gaps: [{ fromSeq: 1, toSeq: 10, reason: 'missed' }],
    })
  })

  it('reconciles a snapshot: new tasks appear, changed states are recorded, vanished ones are lost', () => {
    const p = producer()
    let state = reduceAll([
      p.next(hello),
      p.next(snapshot(1)),
      p.next({ type: 'task:created', taskId: 1 }),
      p.next({ type: 'task:created', taskId: 2 }),
      p.next({ type: 'task:transition', taskId: 2, from: 'idle', to: 'running', attempt: 1 }),
      p.next({ type: 'task:created', taskId: 3 }),
      p.next({ type: 'task:transition', taskId: 3, from: 'idle', to: 'success', attempt: 1 }),
    ])
    p.skip(2)
    state = reduce(
      state,
      p.next(
        snapshot(9, [
          { id: 2, state: 'running', attempt: 1, since: 50 },
          { id: 4, state: 'queued', attempt: 0, since: 80, key: 'x', parentId: 2 },
        ]),
      ),
    )
    const byId = Object.fromEntries(timelines(state, 's1').map((t) => [t.id, t]))
    expect(byId[1]).toMatchObject({ lost: true })
    expect(byId[1]?.entries.at(-1)).toEqual({ kind: 'lost', seq: 10, ts: 100 })
    expect(byId[2]?.entries.some((e) => e.kind === 'snapshot')).toBe(false)
    expect(byId[3]?.lost).toBeUndefined()
    expect(byId[4]).toMatchObject({ state: 'queued', key: 'x', parentId: 2, since: 80 })
    expect(byId[4]?.entries).toEqual([
      { kind: 'snapshot', seq: 10, ts: 100, state: 'queued', attempt: 0 },
    ])
  })

  it('records links for reuse, restart, queued-behind, cancellation and children', () => {
    const p = producer()
    const state = reduceAll([
      p.next(hello),
      p.next({ type: 'task:created', taskId: 1, key: 'k' }),
      p.next({ type: 'task:created', taskId: 2, key: 'k' }),
      p.next({
        type: 'coordination:reuse',
        coordinator: 'dedupe',
        intentId: 2,
        hash: 'k',
        peerId: 1,
      }),
      p.next({ type: 'task:created', taskId: 3, key: 'k' }),
      p.next({
        type: 'task:transition',
        taskId: 1,
        from: 'running',
        to: 'cancelled',
        reason: 'abort',
        cancelledBy: 3,
        attempt: 1,
      }),
      p.next({
        type: 'coordination:restart',
        coordinator: 'restart',
        intentId: 3,
        hash: 'k',
        cancelledPeerIds: [1],
      }),
      p.next({ type: 'task:created', taskId: 4, key: 'k' }),
      p.next({
        type: 'coordination:queued',
        coordinator: 'serialize',
        intentId: 4,
        hash: 'k',
        position: 1,
      }),
      p.next({ type: 'task:created', taskId: 5, parentId: 4 }),
      p.next({
        type: 'coordination:orphaned-intent',
        coordinator: 'forgetful',
        intentId: 5,
        hash: 'z',
      }),
    ])
    expect(timeline(state, 's1', 1)?.links).toEqual({
      reusedBy: [2],
      cancelledBy: 3,
      cancelled: [],
      children: [],
    })
    expect(timeline(state, 's1', 1)?.cancelReason).toBe('abort')
    expect(timeline(state, 's1', 2)?.links).toMatchObject({ reuses: 1 })
    expect(timeline(state, 's1', 3)?.links).toMatchObject({ cancelled: [1] })
    // #3 is the latest live task with the same key created before #4.
    expect(timeline(state, 's1', 4)?.links).toMatchObject({ queuedBehind: 3, children: [5] })
    expect(timeline(state, 's1', 5)?.entries.at(-1)).toMatchObject({
      kind: 'orphaned-intent',
      coordinator: 'forgetful',
    })
  })

  it('counts unknown events, keeps unknown enum values, ignores unknown fields', () => {
    const p = producer()
    const state = reduceAll([
      p.next({ ...hello, compression: 'none' }),
      p.next({ type: 'task:progress', taskId: 1, ratio: 0.5 }),
      p.next({ type: 'cache:hit', fields: { key: 'a' } }),
      p.next({ type: 'task:created', taskId: 1, priority: 3 }),
      p.next({
        type: 'task:transition',
        taskId: 1,
        from: 'idle',
        to: 'parked:rate-limit',
        attempt: 0,
      }),
      p.next({
        type: 'task:transition',
        taskId: 1,
        from: 'parked:rate-limit',
        to: 'cancelled',
        reason: 'quota',
        attempt: 0,
      }),
      p.next({ type: 'session:gap', fromSeq: 7, toSeq: 7, reason: 'solar-flare' }),
    ])
    expect(session(state, 's1')).toMatchObject({
      unknownEvents: 2,
      stale: true,
      gaps: [{ fromSeq: 7, toSeq: 7, reason: 'solar-flare' }],
    })
    expect(timeline(state, 's1', 1)).toMatchObject({ state: 'cancelled', cancelReason: 'quota' })
  })

  it('counts known events with unusable fields as unknown instead of failing', () => {
    const p = producer()
    const state = reduceAll([
      p.next({ type: 'task:created' }),
      p.next({ type: 'task:transition', taskId: 'x', from: 1 }),
      p.next({ type: 'session:snapshot', tasks: 'no' }),
      p.next({ type: 'coordination:reuse', intentId: 1 }),
    ])
    expect(session(state, 's1')?.unknownEvents).toBe(4)
    expect(timelines(state, 's1')).toEqual([])
  })

  it('rejects what is not a v1 envelope, and keeps the state JSON-able', () => {
    const p = producer()
    const good = p.next(hello)
    let state = reduce(initialState(), { ...good, v: 2 } as unknown as Envelope)
    state = reduce(state, { hello: 'world' } as unknown as Envelope)
    state = reduce(state, null as unknown as Envelope)
    expect(state.rejected).toBe(3)
    expect(state.sessionOrder).toEqual([])
    const full = reduceAll(lifecycle(), state)
    expect(JSON.parse(JSON.stringify(full))).toEqual(full)
  })

  it('keeps sessions apart', () => {
    const a = producer('a')
    const b = producer('b')
    const state = reduceAll([
      a.next(hello),
      b.next(hello),
      a.next({ type: 'task:created', taskId: 1, label: 'from a' }),
      b.next({ type: 'task:created', taskId: 1, label: 'from b' }),
    ])
    expect(state.sessionOrder).toEqual(['a', 'b'])
    expect(timeline(state, 'a', 1)?.label).toBe('from a')
    expect(timeline(state, 'b', 1)?.label).toBe('from b')
  })
})
