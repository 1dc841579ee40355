import { describe, expect, it } from 'vitest'
import { formatNdjson, lanes, parseNdjson, reduceAll, session, timelines } from '../src/index.js'
import { readFixture, UPDATE, writeFixture } from './support/fixtures.js'
import { asNewerProducer } from './support/forward.js'
import { RELEASED_ONLY, SCENARIOS } from './support/scenarios.js'

// Unknown events take seq numbers of their own, so everything else is
// compared with the numbering left out.
function withoutSeq(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSeq)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'seq' && key !== 'fromSeq' && key !== 'toSeq')
      .map(([key, field]) => [key, withoutSeq(field)]),
  )
}

describe.each([...Object.keys(SCENARIOS), ...RELEASED_ONLY])(
  'forward-compatibility fixture %s',
  (name) => {
    it('is the committed recording as a newer producer sends it (UPDATE_GOLDEN=1 rewrites)', () => {
      const forward = formatNdjson(asNewerProducer(parseNdjson(readFixture(`${name}.ndjson`))))
      if (UPDATE) writeFixture(forward, 'forward', `${name}.ndjson`)
      expect(readFixture('forward', `${name}.ndjson`)).toBe(forward)
    })

    it('reduces to the same timelines and lanes, counting the unknown events', () => {
      const golden = parseNdjson(readFixture(`${name}.ndjson`))
      const forward = parseNdjson(readFixture('forward', `${name}.ndjson`))
      const sid = golden[0]?.sid ?? ''
      const before = reduceAll(golden)
      const after = reduceAll(forward)
      expect(forward.length).toBeGreaterThan(golden.length)
      expect(withoutSeq(timelines(after, sid))).toEqual(withoutSeq(timelines(before, sid)))
      expect(withoutSeq(lanes(after, sid))).toEqual(withoutSeq(lanes(before, sid)))
      expect(session(after, sid)?.stale).toBe(session(before, sid)?.stale)
      expect(session(after, sid)?.gaps.length).toBe(session(before, sid)?.gaps.length)
      expect(session(after, sid)?.unknownEvents).toBe(forward.length - golden.length)
      expect(session(after, sid)?.capabilities).toContain('compression:zstd')
    })
  },
)
