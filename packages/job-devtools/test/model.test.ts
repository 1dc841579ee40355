import { createRuntime, run } from '@vega/job-core'
import {
  connectDevtools,
  createInProcessTransport,
  type Envelope,
  formatNdjson,
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

  it('counts a task waiting on its coordinator (parked:coordinator) as parked', () => {
    const envelopes = parseNdjson(readGolden('serialize'))
    // Up to the third call parking behind the first: #1 running, #2 and #3 parked.
    const upTo = envelopes.findIndex(
      (envelope) =>
        envelope.e.type === 'task:transition' &&
        (envelope.e as { taskId?: number }).taskId === 3 &&
        (envelope.e as { to?: string }).to === 'parked:coordinator',
    )
    const model = new PanelModel(RETAIN_ALL)
    feed(model, envelopes.slice(0, upTo + 1), 3)
    const counts = model.liveCounts('golden-serialize')
    expect(counts.parked).toBe(2)
    expect(Object.keys(counts).sort()).toEqual(['parked', 'queued', 'running'])
  })

  it('per second counts from now: an idle live session falls to 0, a recording stands at its end', () => {
    const envelopes = parseNdjson(readGolden('restart'))
    const live = new PanelModel(RETAIN_ALL)
    feed(live, envelopes, 5)
    const session = live.sessions.get('golden-restart')
    if (session === undefined) throw new Error('no session')
    const { lastTs } = session.held.meta
    expect(live.throughput(session.key, lastTs)).toBe(4)
    expect(live.throughput(session.key, lastTs + 20_000)).toBe(0)
    // A live session's clock goes on from its last event by the wall time since it arrived.
    expect(live.sessionNow(session.key, session.receivedAt + 20_000)).toBe(lastTs + 20_000)
    expect(live.throughput(session.key)).toBe(
      live.throughput(session.key, live.sessionNow(session.key)),
    )

    const recorded = new PanelModel(RETAIN_ALL)
    const [key] = recorded.enqueueRecording(envelopes)
    recorded.flush()
    expect(recorded.sessionNow(key as string, Date.now() + 60_000)).toBe(lastTs)
    expect(recorded.throughput(key as string)).toBe(4)
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

/** Everything a model shows, per session: what slicing a backlog must not change. */
function shownBy(model: PanelModel) {
  return [...model.sessions.values()].map((session) => ({
    key: session.key,
    meta: session.held.meta,
    tasks: tasksOf(model, session.key),
    trimmedIds: [...session.held.trimmed].sort((a, b) => a - b),
    settled: session.settled,
    trimmedTasks: session.trimmedTasks,
    log: formatNdjson(session.log.toArray()),
    logTrimmed: session.log.trimmed,
    lostInGaps: model.lostInGaps(session.key),
    liveCounts: model.liveCounts(session.key),
    throughput: model.throughput(session.key, session.held.meta.lastTs),
  }))
}

/** A live stream from a real runtime: `tasks` tasks of 4 events each, plus hello and snapshot. */
async function liveStream(tasks: number): Promise<Envelope[]> {
  const envelopes: Envelope[] = []
  const runtime = createRuntime({ name: 'backlog' })
  const disconnect = connectDevtools(
    runtime,
    createInProcessTransport((batch) => envelopes.push(...batch)),
    { sessionId: 'backlog', flushMs: 0, wire: { stack: false } },
  )
  const running = []
  for (let i = 0; i < tasks; i++) running.push(run(runtime, async () => i, { label: `t${i}` }))
  await Promise.all(running.map((task) => task.promise))
  disconnect()
  return envelopes
}

describe('a backlog larger than one slice', () => {
  // The host reduces at most one slice per step and leaves the rest for the
  // next; however the backlog is cut, the end must be the model of reducing
  // it in one go: the same tasks, trims, counts, log and gaps.
  const sliced = (envelopes: readonly Envelope[], retention: typeof RETAIN_ALL, slice: number) => {
    const model = new PanelModel(retention)
    model.enqueue(envelopes)
    let steps = 0
    while (model.pendingCount > 0) {
      model.flush(slice)
      steps += 1
    }
    return { model, steps }
  }
  const atOnce = (envelopes: readonly Envelope[], retention: typeof RETAIN_ALL) => {
    const model = new PanelModel(retention)
    model.enqueue(envelopes)
    model.flush()
    return model
  }

  it('every golden recording, one after another, sliced 1, 7 and 64 at a time, with retention trimming', () => {
    const backlog = fixtureNames().flatMap((name) => parseNdjson(readGolden(name)))
    const retention = { tasks: 3, events: 20 }
    const reference = shownBy(atOnce(backlog, retention))
    expect(reference.length).toBe(fixtureNames().length)
    expect(reference.some((session) => session.trimmedTasks > 0)).toBe(true)
    for (const slice of [1, 7, 64]) {
      const { model, steps } = sliced(backlog, retention, slice)
      expect(steps).toBe(Math.ceil(backlog.length / slice))
      expect(shownBy(model)).toEqual(reference)
    }
  })

  it("a live stream of 3,000 tasks from a real runtime, in the host's slices of 1,024 and in odd ones", async () => {
    const backlog = await liveStream(3000)
    expect(backlog.length).toBe(2 + 4 * 3000)
    const retention = { tasks: 1000, events: 5000 }
    const reference = shownBy(atOnce(backlog, retention))
    expect(reference[0]?.trimmedTasks).toBe(2000)
    expect(reference[0]?.settled.success).toBe(3000)
    for (const slice of [1024, 333]) {
      const { model, steps } = sliced(backlog, retention, slice)
      expect(steps).toBeGreaterThan(1)
      expect(shownBy(model)).toEqual(reference)
    }
  })

  it('batches that keep arriving between slices end in the same model too', async () => {
    const backlog = await liveStream(500)
    const reference = shownBy(atOnce(backlog, { tasks: 200, events: 1000 }))
    const model = new PanelModel({ tasks: 200, events: 1000 })
    for (let start = 0; start < backlog.length; start += 150) {
      model.enqueue(backlog.slice(start, start + 150))
      model.flush(100)
    }
    while (model.pendingCount > 0) model.flush(100)
    expect(shownBy(model)).toEqual(reference)
  })
})
