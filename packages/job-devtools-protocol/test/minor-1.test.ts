import { readFileSync } from 'node:fs'
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
import { validate } from './support/json-schema.js'

// protocol.json as released with minor 0, kept to check what an old reader accepts.
const schema10 = JSON.parse(
  readFileSync(new URL('./support/protocol-1.0.json', import.meta.url), 'utf8'),
) as Record<string, unknown>

/** The recording as a minor-0 reader understands it: `task:abandoned` is a type it does not know. */
function asOldReaderSees(envelopes: readonly Envelope[]): Envelope[] {
  return envelopes.map((envelope) =>
    envelope.e.type === 'task:abandoned'
      ? ({ ...envelope, e: { type: 'x-unknown:abandoned', fields: {} } } as unknown as Envelope)
      : envelope,
  )
}

describe('minor 1: task:abandoned, task:exited.abandoned, the overflow reason', () => {
  it('is announced in session:hello', () => {
    expect(PROTOCOL_VERSION.minor).toBeGreaterThanOrEqual(1)
    const hello = parseNdjson(readFixture('abandoned.ndjson'))[0]!.e
    expect(hello).toMatchObject({ type: 'session:hello', minor: 1 })
    // Released fixtures keep the minor that recorded them.
    expect(parseNdjson(readFixture('dedupe.ndjson'))[0]!.e).toMatchObject({ minor: 0 })
  })

  it('the reducer puts the abandoned body on its timeline and its lane', () => {
    const envelopes = parseNdjson(readFixture('abandoned.ndjson'))
    const state = reduceAll(envelopes)
    const [stubborn] = timelines(state, 'golden-abandoned')
    expect(stubborn!.entries.map((entry) => entry.kind)).toEqual([
      'created',
      'transition',
      'transition',
      'transition',
      'abandoned',
      'exited',
    ])
    expect(stubborn!.entries.at(-1)).toMatchObject({ kind: 'exited', abandoned: true })
    const lane = lanes(state, 'golden-abandoned').find((l) => l.taskId === stubborn!.id)
    expect(lane!.marks.map((mark) => mark.text)).toEqual([
      'body abandoned: slot released',
      'abandoned body exited',
    ])
  })

  it('the overflow reason reaches the timeline', () => {
    const state = reduceAll(parseNdjson(readFixture('overflow-reason.ndjson')))
    const refused = timelines(state, 'golden-overflow-reason').find((t) => t.label === 'refused')
    expect(refused).toMatchObject({ state: 'cancelled', cancelReason: 'overflow' })
  })

  it('an old reader ignores them: everything else validates against the 1.0 schema and reduces the same', () => {
    for (const name of ['abandoned', 'overflow-reason']) {
      const envelopes = parseNdjson(readFixture(`${name}.ndjson`))
      for (const envelope of envelopes) {
        if (envelope.e.type === 'task:abandoned') continue
        // An extra optional field (exited.abandoned) and a new reason string are valid 1.0.
        expect(validate(schema10, envelope)).toEqual([])
      }
      const sid = envelopes[0]!.sid
      const now = reduceAll(envelopes)
      const old = reduceAll(asOldReaderSees(envelopes))
      const abandonedEvents = envelopes.filter((e) => e.e.type === 'task:abandoned').length
      expect(session(old, sid)?.unknownEvents).toBe(abandonedEvents)
      // The old view is the new one without the abandoned entries; states and reasons agree.
      const strip = (list: ReturnType<typeof timelines>) =>
        list.map((t) => ({
          ...t,
          entries: t.entries
            .filter((entry) => entry.kind !== 'abandoned')
            .map((entry) => {
              if (entry.kind !== 'exited') return entry
              const { abandoned: _dropped, ...rest } = entry
              return rest
            }),
        }))
      expect(strip(timelines(old, sid))).toEqual(strip(timelines(now, sid)))
    }
  })
})
