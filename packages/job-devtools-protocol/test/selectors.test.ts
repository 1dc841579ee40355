import { describe, expect, it } from 'vitest'
import {
  initialState,
  lanes,
  reduceAll,
  session,
  sessionIds,
  timeline,
  timelines,
} from '../src/index.js'
import { producer } from './support/envelopes.js'

describe('lanes', () => {
  it('turns a timeline into state segments, an end and marks', () => {
    const p = producer()
    const state = reduceAll([
      p.next({ type: 'session:hello', minor: 0, capabilities: [] }),
      p.next({ type: 'task:created', taskId: 1, label: 'save', key: 'k' }),
      p.next({ type: 'task:transition', taskId: 1, from: 'idle', to: 'queued', attempt: 0 }),
      p.next({ type: 'task:transition', taskId: 1, from: 'queued', to: 'running', attempt: 1 }),
      p.next({ type: 'task:retry', taskId: 1, attempt: 1, delay: 100, error: null }),
      p.next({
        type: 'task:transition',
        taskId: 1,
        from: 'running',
        to: 'cancelled',
        reason: 'abort',
        cancelledBy: 2,
        attempt: 1,
      }),
      p.next({ type: 'task:exited', taskId: 1 }),
    ])
    expect(lanes(state, 's1')).toEqual([
      {
        taskId: 1,
        label: 'save',
        key: 'k',
        state: 'cancelled',
        segments: [
          { state: 'idle', fromSeq: 2, fromTs: 20, toSeq: 3, toTs: 30 },
          { state: 'queued', fromSeq: 3, fromTs: 30, toSeq: 4, toTs: 40 },
          { state: 'running', fromSeq: 4, fromTs: 40, toSeq: 6, toTs: 60 },
        ],
        end: { state: 'cancelled', seq: 6, ts: 60, reason: 'abort', cancelledBy: 2 },
        marks: [
          { kind: 'retry', seq: 5, ts: 50, text: 'attempt 1 failed, retry in 100 ms' },
          { kind: 'exited', seq: 7, ts: 70, text: 'body exited' },
        ],
        links: { reusedBy: [], cancelled: [], children: [], cancelledBy: 2 },
      },
    ])
  })

  it('leaves the current segment open, and starts a lane where the stream joined', () => {
    const p = producer()
    p.skip(4)
    const state = reduceAll([
      p.next({ type: 'task:transition', taskId: 7, from: 'queued', to: 'running', attempt: 1 }),
      p.next({
        type: 'session:snapshot',
        upToSeq: 5,
        tasks: [
          { id: 7, state: 'running', attempt: 1, since: 50 },
          { id: 8, state: 'parked:coordinator', attempt: 0, since: 0 },
        ],
      }),
    ])
    const [seven, eight] = lanes(state, 's1')
    expect(seven?.segments).toEqual([{ state: 'running', fromSeq: 5, fromTs: 50 }])
    expect(seven?.end).toBeUndefined()
    expect(eight?.segments).toEqual([{ state: 'parked:coordinator', fromSeq: 6, fromTs: 60 }])
  })

  it('describes coordination marks and lost tasks', () => {
    const p = producer()
    const state = reduceAll([
      p.next({ type: 'task:created', taskId: 1, key: 'k' }),
      p.next({ type: 'task:created', taskId: 2, key: 'k' }),
      p.next({
        type: 'coordination:reuse',
        coordinator: 'dedupe',
        intentId: 2,
        hash: 'k',
        peerId: 1,
      }),
      p.next({
        type: 'coordination:restart',
        coordinator: 'restart',
        intentId: 2,
        hash: 'k',
        cancelledPeerIds: [1],
      }),
      p.next({
        type: 'coordination:queued',
        coordinator: 'serialize',
        intentId: 2,
        hash: 'k',
        position: 2,
      }),
      p.next({
        type: 'coordination:orphaned-intent',
        coordinator: 'forgetful',
        intentId: 2,
        hash: 'k',
      }),
      p.next({ type: 'session:snapshot', upToSeq: 6, tasks: [] }),
    ])
    expect(lanes(state, 's1')[1]?.marks.map((m) => m.text)).toEqual([
      'dedupe: reuses #1',
      'restart: cancelled #1',
      'serialize: queued, 2 ahead',
      'forgetful: decided nothing',
      'ended unobserved',
    ])
    expect(lanes(state, 's1')[1]?.segments).toEqual([
      { state: 'idle', fromSeq: 2, fromTs: 20, toSeq: 7, toTs: 70 },
    ])
  })
})

describe('session selectors', () => {
  it('answer empty for unknown sessions and tasks', () => {
    const state = initialState()
    expect(sessionIds(state)).toEqual([])
    expect(session(state, 'nope')).toBeUndefined()
    expect(session(state, 'constructor')).toBeUndefined()
    expect(timelines(state, 'nope')).toEqual([])
    expect(lanes(state, 'nope')).toEqual([])
    expect(timeline(state, 'nope', 1)).toBeUndefined()
  })
})
