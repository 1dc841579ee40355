import { describe, expect, it } from 'vitest'
import { readCommittedSchema } from '../scripts/generate-schema.js'
import {
  type Envelope,
  initialState,
  lanes,
  parseNdjson,
  reduce,
  reduceAll,
  session,
  type TaskTimeline,
  timelines,
} from '../src/index.js'
import { formatTimelines, readFixture, UPDATE, writeFixture } from './support/fixtures.js'
import { validate } from './support/json-schema.js'
import { RELEASED_ONLY, SCENARIOS } from './support/scenarios.js'

const schema = JSON.parse(readCommittedSchema()) as Record<string, unknown>

// Every seq is either delivered or covered by an announced gap.
function expectNoSilentLoss(envelopes: readonly Envelope[]): void {
  let expected = 1
  for (const envelope of envelopes) {
    if (envelope.e.type === 'session:gap' && 'fromSeq' in envelope.e) {
      expect(envelope.e.fromSeq).toBe(expected)
      expect(envelope.e.toSeq).toBe(envelope.seq)
    } else {
      expect(envelope.seq).toBe(expected)
    }
    expected = envelope.seq + 1
  }
}

describe.each(Object.keys(SCENARIOS))('golden fixture %s', (name) => {
  it('is recorded byte for byte, and its reduced timelines match (UPDATE_GOLDEN=1 rewrites)', async () => {
    const recording = await (
      SCENARIOS[name] as () => ReturnType<NonNullable<(typeof SCENARIOS)[string]>>
    )()
    const reduced = formatTimelines(reduceAll(parseNdjson(recording.ndjson)), recording.sid)
    if (UPDATE) {
      writeFixture(recording.ndjson, `${name}.ndjson`)
      writeFixture(reduced, `${name}.timelines.json`)
    }
    expect(recording.ndjson).toBe(readFixture(`${name}.ndjson`))
    expect(reduced).toBe(readFixture(`${name}.timelines.json`))
  })
})

describe.each([...Object.keys(SCENARIOS), ...RELEASED_ONLY])('committed fixture %s', (name) => {
  it('still reduces from the committed file, and every envelope matches protocol.json', () => {
    const envelopes = parseNdjson(readFixture(`${name}.ndjson`))
    const sid = envelopes[0]?.sid ?? ''
    expect(formatTimelines(reduceAll(envelopes), sid)).toBe(readFixture(`${name}.timelines.json`))
    for (const envelope of envelopes) expect(validate(schema, envelope)).toEqual([])
    expectNoSilentLoss(envelopes)
    expect(envelopes.slice(0, 2).map((e) => e.e.type)).toEqual([
      'session:hello',
      'session:snapshot',
    ])
  })
})

describe.each([...Object.keys(SCENARIOS), ...RELEASED_ONLY])('batched reduce on %s', (name) => {
  it('equals reducing envelope by envelope, split anywhere, and never modifies its input', () => {
    const envelopes = parseNdjson(readFixture(`${name}.ndjson`))
    const oneByOne = envelopes.reduce(reduce, initialState())
    expect(reduceAll(envelopes)).toEqual(oneByOne)
    for (const at of [1, 2, Math.floor(envelopes.length / 3), envelopes.length - 1]) {
      const before = reduceAll(envelopes.slice(0, at))
      const frozen = JSON.stringify(before)
      expect(reduceAll(envelopes.slice(at), before)).toEqual(oneByOne)
      expect(JSON.stringify(before)).toBe(frozen)
    }
  })
})

function load(name: string) {
  const envelopes = parseNdjson(readFixture(`${name}.ndjson`))
  const sid = envelopes[0]?.sid ?? ''
  const state = reduceAll(envelopes)
  const byId = (id: number) => timelines(state, sid).find((task) => task.id === id) as TaskTimeline
  return { envelopes, sid, state, byId, types: envelopes.map((e) => e.e.type) }
}

const count = (types: readonly string[], type: string) => types.filter((t) => t === type).length

describe('what the fixtures show (coordination.md §5)', () => {
  it('dedupe: one body; #2–#4 cancelled/dedupe, linked to #1 by reuse', () => {
    const { byId, types } = load('dedupe')
    expect(count(types, 'coordination:reuse')).toBe(3)
    expect(byId(1)).toMatchObject({ state: 'success', links: { reusedBy: [2, 3, 4] } })
    for (const id of [2, 3, 4]) {
      expect(byId(id)).toMatchObject({
        state: 'cancelled',
        cancelReason: 'dedupe',
        links: { reuses: 1 },
      })
    }
  })

  it('restart: #1–#3 cancelled/abort, each by the next call; #4 succeeds', () => {
    const { byId, types, envelopes } = load('restart')
    expect(count(types, 'coordination:restart')).toBe(3)
    for (const id of [1, 2, 3]) {
      expect(byId(id)).toMatchObject({
        state: 'cancelled',
        cancelReason: 'abort',
        links: { cancelledBy: id + 1 },
      })
      expect(byId(id + 1).links.cancelled).toContain(id)
    }
    expect(byId(4).state).toBe('success')
    expect(count(types, 'task:exited')).toBe(3)
    expect(envelopes.some((e) => e.e.type === 'task:exited' && 'threw' in e.e)).toBe(true)
  })

  it('serialize: four bodies in call order, each queued behind the one before', () => {
    const { byId, types } = load('serialize')
    expect(count(types, 'coordination:queued')).toBe(3)
    for (const id of [1, 2, 3, 4]) expect(byId(id).state).toBe('success')
    for (const id of [2, 3, 4]) expect(byId(id).links.queuedBehind).toBe(id - 1)
    const startedAt = [1, 2, 3, 4].map(
      (id) => byId(id).entries.find((e) => e.kind === 'transition' && e.to === 'running')?.ts,
    )
    expect(startedAt).toEqual([0, 100, 200, 300])
  })

  it('exhaust as released (minor 0): one body; #2–#4 cancelled/exhaust-dropped, no coordination event', () => {
    const { byId, types } = load('exhaust')
    expect(types.filter((t) => t.startsWith('coordination:'))).toEqual([])
    expect(byId(1).state).toBe('success')
    for (const id of [2, 3, 4])
      expect(byId(id)).toMatchObject({ state: 'cancelled', cancelReason: 'exhaust-dropped' })
  })

  it('exhaust since minor 2: each drop is a coordination:dropped naming #1, on the timeline and the lane', () => {
    const { byId, types, state, sid } = load('exhaust-dropped')
    expect(types.filter((t) => t.startsWith('coordination:'))).toEqual([
      'coordination:dropped',
      'coordination:dropped',
      'coordination:dropped',
    ])
    expect(byId(1).state).toBe('success')
    for (const id of [2, 3, 4]) {
      expect(byId(id)).toMatchObject({ state: 'cancelled', cancelReason: 'exhaust-dropped' })
      expect(byId(id).entries).toContainEqual(
        expect.objectContaining({ kind: 'dropped', coordinator: 'exhaust', peerId: 1 }),
      )
      const lane = lanes(state, sid).find((l) => l.taskId === id)
      expect(lane!.marks.map((mark) => mark.text)).toEqual(['exhaust: dropped, #1 in flight'])
    }
  })

  it('error with a cyclic cause: encoded with Circular, retried, then error', () => {
    const { byId, envelopes } = load('error-cyclic-cause')
    const task = byId(1)
    expect(task.state).toBe('error')
    expect(task.error).toEqual({
      __type: 'Error',
      name: 'Error',
      message: 'request failed',
      cause: {
        __type: 'Error',
        name: 'TypeError',
        message: 'socket hang up',
        cause: { __type: 'Circular' },
      },
      fields: { status: 503 },
    })
    expect(envelopes.filter((e) => e.e.type === 'task:retry')).toHaveLength(1)
  })

  it('overflow: the lost envelopes are announced, the session is stale until the snapshot', () => {
    const { envelopes, sid } = load('overflow-gap')
    const gapAt = envelopes.findIndex((e) => e.e.type === 'session:gap')
    expect(gapAt).toBeGreaterThan(1)
    expect(envelopes[gapAt]?.e).toMatchObject({ reason: 'overflow' })
    const snapshotAt = envelopes.findIndex(
      (e, index) => index > gapAt && e.e.type === 'session:snapshot',
    )
    expect(snapshotAt).toBeGreaterThan(gapAt)
    expect(session(reduceAll(envelopes.slice(0, snapshotAt)), sid)?.stale).toBe(true)
    const final = reduceAll(envelopes)
    expect(session(final, sid)?.stale).toBe(false)
    const slow = lanes(final, sid).find((lane) => lane.label === 'slow')
    expect(slow?.state).toBe('success')
  })
})
