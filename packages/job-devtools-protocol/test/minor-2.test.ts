import { describe, expect, it } from 'vitest'
import {
  type Envelope,
  lanes,
  PROTOCOL_VERSION,
  parseNdjson,
  reduceAll,
  session,
  timelines,
} from '../src/index.js'
import { readFixture } from './support/fixtures.js'

/** The recording as a minor-1 reader understands it: `coordination:dropped` is a type it does not know. */
function asOldReaderSees(envelopes: readonly Envelope[]): Envelope[] {
  return envelopes.map((envelope) =>
    envelope.e.type === 'coordination:dropped'
      ? ({ ...envelope, e: { type: 'x-unknown:dropped', fields: {} } } as unknown as Envelope)
      : envelope,
  )
}

describe('minor 2: coordination:dropped', () => {
  it('is announced in session:hello', () => {
    expect(PROTOCOL_VERSION).toEqual({ major: 1, minor: 2 })
    const hello = parseNdjson(readFixture('exhaust-dropped.ndjson'))[0]!.e
    expect(hello).toMatchObject({ type: 'session:hello', minor: 2 })
  })

  it('is encoded from the runtime event with its peer, and reduced onto the lane', () => {
    const envelopes = parseNdjson(readFixture('exhaust-dropped.ndjson'))
    const dropped = envelopes.filter((envelope) => envelope.e.type === 'coordination:dropped')
    expect(dropped.map((envelope) => envelope.e)).toEqual(
      [2, 3, 4].map((intentId) => ({
        type: 'coordination:dropped',
        coordinator: 'exhaust',
        intentId,
        hash: '["doc",1]',
        peerId: 1,
      })),
    )
    const state = reduceAll(envelopes)
    const lane = lanes(state, 'golden-exhaust-dropped').find((l) => l.taskId === 2)
    expect(lane!.marks).toEqual([
      expect.objectContaining({ kind: 'dropped', text: 'exhaust: dropped, #1 in flight' }),
    ])
  })

  it('an old reader counts it as unknown and reduces everything else the same', () => {
    const envelopes = parseNdjson(readFixture('exhaust-dropped.ndjson'))
    const sid = envelopes[0]!.sid
    const now = reduceAll(envelopes)
    const old = reduceAll(asOldReaderSees(envelopes))
    expect(session(old, sid)?.unknownEvents).toBe(3)
    expect(session(now, sid)?.unknownEvents).toBe(0)
    const strip = (list: ReturnType<typeof timelines>) =>
      list.map((t) => ({ ...t, entries: t.entries.filter((entry) => entry.kind !== 'dropped') }))
    expect(strip(timelines(old, sid))).toEqual(strip(timelines(now, sid)))
  })
})
