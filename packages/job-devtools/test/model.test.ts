import {
  type Envelope,
  parseNdjson,
  reduceAll,
  type TaskTimeline,
  timelines,
} from '@vega/job-devtools-protocol'
import { describe, expect, it } from 'vitest'
import { PanelModel } from '../src/internal/model.js'
import { fixtureNames, readGolden } from './support/fixtures.js'

const RETAIN_ALL = { tasks: 1_000, events: 1_000 }

function tasksOf(model: PanelModel, key: string): TaskTimeline[] {
  const held = model.sessions.get(key)?.held
  if (held === undefined) return []
  return held.order.map((id) => held.tasks.get(id) as TaskTimeline)
}

/** Feeds `envelopes` in frames of `frameSize`, one flush per frame, as the panel does. */
function feed(model: PanelModel, envelopes: readonly Envelope[], frameSize: number): void {
  for (let start = 0; start < envelopes.length; start += frameSize) {
    model.enqueue(envelopes.slice(start, start + frameSize))
    model.flush()
  }
}

describe('the panel model on the golden recordings', () => {
  for (const name of fixtureNames()) {
    for (const frameSize of [1, 3, 1000]) {
      it(`${name}, ${frameSize} envelope(s) per frame: the same timelines as the protocol's reducer`, () => {
        const envelopes = parseNdjson(readGolden(name))
        const sid = (envelopes[0] as Envelope).sid
        const model = new PanelModel(RETAIN_ALL)
        feed(model, envelopes, frameSize)
        expect(tasksOf(model, sid)).toEqual(timelines(reduceAll(envelopes), sid))
        expect(model.sessions.size).toBe(1)
      })
    }
    it(`${name} with unknown events and fields (forward/): the same timelines`, () => {
      const known = parseNdjson(readGolden(name))
      const forward = parseNdjson(readGolden(`forward/${name}`))
      const sid = (known[0] as Envelope).sid
      const model = new PanelModel(RETAIN_ALL)
      feed(model, forward, 4)
      expect(tasksOf(model, sid)).toEqual(timelines(reduceAll(forward), sid))
      expect(model.sessions.get(sid)?.held.meta.unknownEvents).toBe(forward.length - known.length)
      const reference = new PanelModel(RETAIN_ALL)
      feed(reference, known, 4)
      expect(model.lostInGaps(sid)).toBe(reference.lostInGaps(sid))
    })
  }

  it('counts settled tasks per terminal state, as the recording ends them', () => {
    const envelopes = parseNdjson(readGolden('restart'))
    const model = new PanelModel(RETAIN_ALL)
    feed(model, envelopes, 5)
    const session = model.sessions.get('golden-restart')
    expect(session?.settled).toEqual({ success: 1, error: 0, cancelled: 3 })
    expect(model.liveCounts('golden-restart')).toEqual({ queued: 0, parked: 0, running: 0 })
  })
})

describe('gaps are counted exactly', () => {
  it('an announced overflow gap: every seq from fromSeq to toSeq', () => {
    const envelopes = parseNdjson(readGolden('overflow-gap'))
    const gap = envelopes.find((envelope) => envelope.e.type === 'session:gap')?.e as {
      fromSeq: number
      toSeq: number
    }
    const model = new PanelModel(RETAIN_ALL)
    feed(model, envelopes, 2)
    expect(model.lostInGaps('golden-overflow-gap')).toBe(gap.toSeq - gap.fromSeq + 1)
    expect(model.lostInGaps('golden-overflow-gap')).toBe(11)
  })

  it('a silent jump in seq is counted as the envelopes that are missing', () => {
    const envelopes = parseNdjson(readGolden('serialize'))
    const kept = envelopes.filter((envelope) => envelope.seq < 6 || envelope.seq > 12)
    const model = new PanelModel(RETAIN_ALL)
    feed(model, kept, 3)
    expect(model.lostInGaps('golden-serialize')).toBe(7)
  })

  it('two gaps and a duplicate: each lost seq once, the duplicate neither lost nor applied twice', () => {
    const envelopes = parseNdjson(readGolden('restart'))
    const kept = envelopes.filter((e) => ![4, 5, 10, 11, 12].includes(e.seq))
    const withDuplicate = [...kept.slice(0, 8), kept[3] as Envelope, ...kept.slice(8)]
    const model = new PanelModel(RETAIN_ALL)
    feed(model, withDuplicate, 2)
    expect(model.lostInGaps('golden-restart')).toBe(5)
    expect(model.sessions.get('golden-restart')?.log.size).toBe(kept.length)
  })
})

describe('retention', () => {
  it('trims the oldest settled tasks first, counts them, and keeps their settlement in the counts', () => {
    const envelopes = parseNdjson(readGolden('restart'))
    const model = new PanelModel({ tasks: 2, events: 1_000 })
    feed(model, envelopes, 1)
    const session = model.sessions.get('golden-restart')
    const all = timelines(reduceAll(envelopes), 'golden-restart')
    expect(session?.held.tasks.size).toBe(2)
    expect(session?.trimmedTasks).toBe(all.length - 2)
    expect(session?.settled).toEqual({ success: 1, error: 0, cancelled: 3 })
    // The task still running at the end is never the one trimmed while settled ones remain.
    expect([...(session?.held.tasks.keys() ?? [])]).toEqual([3, 4])
  })

  it('keeps the newest events in the log and counts the dropped ones', () => {
    const envelopes = parseNdjson(readGolden('dedupe'))
    const model = new PanelModel({ tasks: 100, events: 5 })
    feed(model, envelopes, 4)
    const log = model.sessions.get('golden-dedupe')?.log
    expect(log?.size).toBe(5)
    expect(log?.trimmed).toBe(envelopes.length - 5)
    expect(log?.toArray().map((e) => e.seq)).toEqual(envelopes.slice(-5).map((e) => e.seq))
  })
})

describe('sessions', () => {
  it('a panel that joins a running session starts there: no gap, and it asks for a snapshot', () => {
    const envelopes = parseNdjson(readGolden('restart'))
    const joined: string[] = []
    const model = new PanelModel(RETAIN_ALL, (key) => joined.push(key))
    feed(model, envelopes.slice(9), 3)
    expect(model.lostInGaps('golden-restart')).toBe(0)
    expect(joined).toEqual(['golden-restart'])
  })

  it('a producer that reconnects (hello at seq 1 again) goes on in the same session', () => {
    const envelopes = parseNdjson(readGolden('dedupe'))
    const model = new PanelModel(RETAIN_ALL)
    feed(model, envelopes, 4)
    feed(model, envelopes.slice(0, 2), 4)
    expect(model.sessions.size).toBe(1)
    expect(model.lostInGaps('golden-dedupe')).toBe(0)
    expect(model.sessions.get('golden-dedupe')?.held.meta.lastSeq).toBe(2)
  })

  it('a recording is a session of its own, even with the sid of a live one', () => {
    const envelopes = parseNdjson(readGolden('exhaust'))
    const model = new PanelModel(RETAIN_ALL)
    feed(model, envelopes, 100)
    const keys = model.enqueueRecording(envelopes)
    model.flush()
    expect(model.sessions.size).toBe(2)
    expect(keys).toEqual(['golden-exhaust · recording 1'])
    expect(tasksOf(model, keys[0] as string)).toEqual(tasksOf(model, 'golden-exhaust'))
  })
})

describe('rows: filters and grouping', () => {
  const model = new PanelModel(RETAIN_ALL)
  feed(model, parseNdjson(readGolden('restart')), 100)
  feed(model, parseNdjson(readGolden('serialize')), 100)
  const ids = (rows: readonly TaskTimeline[]): number[] => rows.map((row) => row.id)

  it('by state, label, key and free text', () => {
    expect(ids(model.rows('golden-restart', { states: ['cancelled'] }))).toEqual([1, 2, 3])
    expect(ids(model.rows('golden-restart', { label: 'call #4' }))).toEqual([4])
    expect(ids(model.rows('golden-restart', { key: 'doc' }))).toEqual([1, 2, 3, 4])
    expect(ids(model.rows('golden-restart', { key: 'nothing' }))).toEqual([])
    expect(ids(model.rows('golden-restart', { text: '#2' }))).toEqual([2])
  })

  it('hides tasks settled longer ago than asked', () => {
    // In the restart recording, #1–#3 settle at ts 0 and #4 at ts 100.
    expect(ids(model.rows('golden-restart', { hideSettledOlderThanMs: 50 }))).toEqual([4])
    expect(ids(model.rows('golden-restart', { hideSettledOlderThanMs: 500 }))).toEqual([1, 2, 3, 4])
  })

  it('groups by label, keeping first-seen order inside a group', () => {
    const rows = model.rows('golden-serialize', {}, 'label')
    const labels = rows.map((row) => row.label ?? '')
    expect(labels).toEqual([...labels].sort())
    expect(rows.length).toBe(model.rows('golden-serialize').length)
  })
})

describe('flush(limit)', () => {
  it('reduces the oldest envelopes first and leaves the rest pending, with the same end result', () => {
    const envelopes = parseNdjson(readGolden('restart'))
    const model = new PanelModel(RETAIN_ALL)
    model.enqueue(envelopes)
    expect(model.flush(10)).toBe(true)
    expect(model.pendingCount).toBe(envelopes.length - 10)
    expect(model.sessions.get('golden-restart')?.held.meta.lastSeq).toBe(10)
    while (model.pendingCount > 0) model.flush(7)
    expect(tasksOf(model, 'golden-restart')).toEqual(
      timelines(reduceAll(envelopes), 'golden-restart'),
    )
  })
})
