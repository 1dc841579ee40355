import type { Lane } from '@vega/job-devtools-protocol'
import { describe, expect, it } from 'vitest'
import { BODY_GLYPHS, describeEnd, drawLane, latestTs } from '../src/swimlane.js'

const T0 = 1_000_000
const links = { reusedBy: [], cancelled: [], children: [] }

function lane(partial: Partial<Lane> & Pick<Lane, 'segments'>): Lane {
  return { taskId: 1, state: 'success', marks: [], links, ...partial }
}

describe('drawLane', () => {
  it('fills each state segment over the columns it lasted and marks the end', () => {
    const served = lane({
      segments: [
        { state: 'idle', fromSeq: 1, fromTs: T0, toSeq: 2, toTs: T0 },
        { state: 'parked:coordinator', fromSeq: 2, fromTs: T0, toSeq: 3, toTs: T0 + 50 },
        { state: 'queued', fromSeq: 3, fromTs: T0 + 50, toSeq: 4, toTs: T0 + 50 },
        { state: 'running', fromSeq: 4, fromTs: T0 + 50, toSeq: 5, toTs: T0 + 100 },
      ],
      end: { state: 'success', seq: 5, ts: T0 + 100 },
    })
    expect(drawLane(served, { startTs: T0, endTs: T0 + 100, width: 11 })).toBe('[~~~~~=====o]')
  })

  it('a task cancelled on arrival is a lone x at its time', () => {
    const merged = lane({
      state: 'cancelled',
      segments: [{ state: 'idle', fromSeq: 1, fromTs: T0 + 20, toSeq: 2, toTs: T0 + 20 }],
      end: { state: 'cancelled', seq: 2, ts: T0 + 20, reason: 'dedupe', cancelledBy: 1 },
    })
    expect(drawLane(merged, { startTs: T0, endTs: T0 + 100, width: 11 })).toBe('[  x        ]')
    expect(describeEnd(merged, (id) => id)).toBe('cancelled (dedupe, by #1)')
  })

  it('a body that ran for less than a column still shows one =, its end one column right', () => {
    // restart: #3's body starts, and #4 cancels it within the same millisecond.
    const restarted = lane({
      state: 'cancelled',
      segments: [
        { state: 'idle', fromSeq: 1, fromTs: T0 + 50, toSeq: 2, toTs: T0 + 50 },
        { state: 'queued', fromSeq: 2, fromTs: T0 + 50, toSeq: 3, toTs: T0 + 50 },
        { state: 'running', fromSeq: 3, fromTs: T0 + 50, toSeq: 4, toTs: T0 + 50 },
      ],
      end: { state: 'cancelled', seq: 4, ts: T0 + 50, reason: 'abort', cancelledBy: 4 },
      marks: [{ kind: 'exited', seq: 9, ts: T0 + 80, text: 'body exited' }],
    })
    expect(drawLane(restarted, { startTs: T0, endTs: T0 + 100, width: 11 })).toBe('[     =x-   ]')
    // Merged before running (dedupe): no body, no =.
    const merged = lane({
      state: 'cancelled',
      segments: [{ state: 'idle', fromSeq: 1, fromTs: T0 + 50, toSeq: 2, toTs: T0 + 50 }],
      end: { state: 'cancelled', seq: 2, ts: T0 + 50, reason: 'dedupe', cancelledBy: 1 },
    })
    expect(drawLane(merged, { startTs: T0, endTs: T0 + 100, width: 11 })).toBe('[     x     ]')
  })

  it('an open segment (no end yet) runs to the right edge', () => {
    const live = lane({
      state: 'running',
      segments: [{ state: 'running', fromSeq: 1, fromTs: T0 }],
    })
    expect(drawLane(live, { startTs: T0, endTs: T0 + 10, width: 5 })).toBe('[=====]')
    expect(describeEnd(live, (id) => id)).toBe('running')
  })

  it('latestTs is the right edge: the latest end, segment or mark', () => {
    const a = lane({
      segments: [{ state: 'running', fromSeq: 1, fromTs: T0, toSeq: 2, toTs: T0 + 40 }],
      end: { state: 'success', seq: 2, ts: T0 + 40 },
    })
    const b = lane({
      taskId: 2,
      state: 'cancelled',
      segments: [],
      marks: [{ kind: 'exited', seq: 9, ts: T0 + 70, text: 'body exited' }],
    })
    expect(latestTs([a, b], T0)).toBe(T0 + 70)
    expect(latestTs([], T0)).toBe(T0)
  })

  it('a cancelled body that ignores its signal holds its slot (-) until it exits', () => {
    const stubborn = lane({
      state: 'cancelled',
      segments: [{ state: 'running', fromSeq: 1, fromTs: T0, toSeq: 2, toTs: T0 + 20 }],
      end: { state: 'cancelled', seq: 2, ts: T0 + 20, reason: 'abort' },
      marks: [{ kind: 'exited', seq: 5, ts: T0 + 60, text: 'body exited' }],
    })
    expect(drawLane(stubborn, { startTs: T0, endTs: T0 + 100, width: 11 })).toBe('[==x---     ]')
  })

  it('an abandoned body: slot held (-), released at A, still running (:) until it exits', () => {
    const abandoned = lane({
      state: 'cancelled',
      segments: [{ state: 'running', fromSeq: 1, fromTs: T0, toSeq: 2, toTs: T0 + 20 }],
      end: { state: 'cancelled', seq: 2, ts: T0 + 20, reason: 'abort' },
      marks: [
        { kind: 'abandoned', seq: 3, ts: T0 + 50, text: 'body abandoned: slot released' },
        { kind: 'exited', seq: 6, ts: T0 + 80, text: 'abandoned body exited' },
      ],
    })
    expect(drawLane(abandoned, { startTs: T0, endTs: T0 + 100, width: 11 })).toBe('[==x--A::   ]')
    expect(BODY_GLYPHS).toEqual({ holding: '-', abandoned: 'A', loose: ':' })
  })

  it('an abandoned body that never exits runs loose to the right edge', () => {
    const forever = lane({
      state: 'cancelled',
      segments: [{ state: 'running', fromSeq: 1, fromTs: T0, toSeq: 2, toTs: T0 + 20 }],
      end: { state: 'cancelled', seq: 2, ts: T0 + 20, reason: 'abort' },
      marks: [{ kind: 'abandoned', seq: 3, ts: T0 + 50, text: 'body abandoned: slot released' }],
    })
    expect(drawLane(forever, { startTs: T0, endTs: T0 + 100, width: 11 })).toBe('[==x--A:::::]')
  })
})
