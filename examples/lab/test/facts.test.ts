// What each coordinator does with repeated calls, cell by cell, from the
// CLI's `--json` output: the lab's scenario (four calls with one key, issued back-to-back; call i's body
// sleeps D ms on the real clock and returns i) for every strategy.
import type { Lane } from '@vega/job-devtools-protocol'
import { beforeAll, describe, expect, it } from 'vitest'
import type { LabDocument } from '../src/cli.js'
import type { ScenarioResult } from '../src/scenario.js'
import { labJson } from './support.js'

const HASH = '"k"'
let document: LabDocument
let boundedOne: ScenarioResult

beforeAll(async () => {
  document = await labJson()
  const extra = await labJson('--strategy', 'bounded:1')
  boundedOne = extra.runs[0]!
})

function runOf(strategy: string): ScenarioResult {
  const found = document.runs.find((run) => run.strategy === strategy)
  if (found === undefined) throw new Error(`no run for ${strategy}`)
  return found
}

const running = (lane: Lane) => lane.segments.find((segment) => segment.state === 'running')

/** The `seq` at which each call's body started, from the devtools lanes. */
const startSeqs = (run: ScenarioResult) => run.lanes.map((lane) => running(lane)?.fromSeq)
const endSeqs = (run: ScenarioResult) => run.lanes.map((lane) => lane.end?.seq)

describe('the --json document', () => {
  it('names itself, echoes the options and runs the default strategies in order', () => {
    expect(document.lab).toBe('@vega/lab')
    expect(document.format).toBe(1)
    expect(document.options).toEqual({
      calls: 4,
      duration: 50,
      strategies: [
        'none',
        'dedupe',
        'restart',
        'serialize',
        'exhaust',
        'keepLatest',
        'bounded(2)',
        'forgetful',
      ],
    })
    expect(document.runs.map((run) => [run.strategy, run.name, run.coordinator])).toEqual([
      ['none', 'none', null],
      ['dedupe', 'dedupe', 'dedupe'],
      ['restart', 'restart', 'restart'],
      ['serialize', 'serialize', 'serialize'],
      ['exhaust', 'exhaust', 'exhaust'],
      ['keepLatest', 'keepLatest', 'keepLatest'],
      ['bounded(2)', 'bounded', 'bounded'],
      ['forgetful', 'forgetful', 'forgetful'],
    ])
    for (const run of document.runs) {
      expect([run.key, run.hash, run.calls, run.duration]).toEqual(['k', HASH, 4, 50])
    }
  })

  it('agrees with the devtools lanes for every run: one lane per call, same ends, same executions', () => {
    for (const run of [...document.runs, boundedOne]) {
      expect(run.lanes.map((lane) => lane.taskId)).toEqual(run.tasks.map((task) => task.taskId))
      expect(
        run.lanes.map((lane) => ({
          state: lane.end?.state,
          reason: lane.end?.reason,
          cancelledBy: lane.end?.cancelledBy,
        })),
      ).toEqual(
        run.tasks.map((task) => ({
          state: task.state,
          reason: task.cancelReason,
          cancelledBy: task.cancelledBy,
        })),
      )
      // A lane that reached `running` is a body that ran.
      expect(run.lanes.filter((lane) => running(lane) !== undefined).length).toBe(run.executions)
      expect(run.executions).toBe(run.bodies.length)
    }
  })
})

describe('none (plain run)', () => {
  it('bodies run: 4, at once', () => {
    const run = runOf('none')
    expect(run.executions).toBe(4)
    expect(run.bodies).toEqual([1, 2, 3, 4])
    // Every body started before any task ended.
    const firstEnd = Math.min(...endSeqs(run).map(Number))
    expect(startSeqs(run).every((seq) => seq !== undefined && seq < firstEnd)).toBe(true)
  })

  it('tasks: success ×4; promises: each its own value; events: none', () => {
    const run = runOf('none')
    expect(run.tasks).toEqual([
      { call: 1, taskId: 1, state: 'success' },
      { call: 2, taskId: 2, state: 'success' },
      { call: 3, taskId: 3, state: 'success' },
      { call: 4, taskId: 4, state: 'success' },
    ])
    expect(run.promises).toEqual([
      { call: 1, status: 'resolved', value: 1 },
      { call: 2, status: 'resolved', value: 2 },
      { call: 3, status: 'resolved', value: 3 },
      { call: 4, status: 'resolved', value: 4 },
    ])
    expect(run.events).toEqual([])
    expect(run.exits).toEqual([])
  })
})

describe('dedupe', () => {
  it('bodies run: 1', () => {
    const run = runOf('dedupe')
    expect(run.executions).toBe(1)
    expect(run.bodies).toEqual([1])
  })

  it('tasks: success, cancelled dedupe ×3; promises: all resolve to #1’s value', () => {
    const run = runOf('dedupe')
    expect(run.tasks).toEqual([
      { call: 1, taskId: 1, state: 'success' },
      { call: 2, taskId: 2, state: 'cancelled', cancelReason: 'dedupe', cancelledBy: 1 },
      { call: 3, taskId: 3, state: 'cancelled', cancelReason: 'dedupe', cancelledBy: 1 },
      { call: 4, taskId: 4, state: 'cancelled', cancelReason: 'dedupe', cancelledBy: 1 },
    ])
    expect(run.promises).toEqual([
      { call: 1, status: 'resolved', value: 1 },
      { call: 2, status: 'resolved', value: 1 },
      { call: 3, status: 'resolved', value: 1 },
      { call: 4, status: 'resolved', value: 1 },
    ])
  })

  it('events: coordination:reuse ×3, stamped dedupe', () => {
    expect(runOf('dedupe').events).toEqual([
      { type: 'coordination:reuse', coordinator: 'dedupe', intentId: 2, hash: HASH, peerId: 1 },
      { type: 'coordination:reuse', coordinator: 'dedupe', intentId: 3, hash: HASH, peerId: 1 },
      { type: 'coordination:reuse', coordinator: 'dedupe', intentId: 4, hash: HASH, peerId: 1 },
    ])
  })
})

describe('restart', () => {
  it('bodies run: 4 (every call really started)', () => {
    const run = runOf('restart')
    expect(run.executions).toBe(4)
    expect(run.bodies).toEqual([1, 2, 3, 4])
    // Each body started before the next call cancelled it.
    for (const lane of run.lanes) expect(running(lane)).toBeDefined()
  })

  it('tasks: cancelled abort ×3 (each by the next call), success', () => {
    expect(runOf('restart').tasks).toEqual([
      { call: 1, taskId: 1, state: 'cancelled', cancelReason: 'abort', cancelledBy: 2 },
      { call: 2, taskId: 2, state: 'cancelled', cancelReason: 'abort', cancelledBy: 3 },
      { call: 3, taskId: 3, state: 'cancelled', cancelReason: 'abort', cancelledBy: 4 },
      { call: 4, taskId: 4, state: 'success' },
    ])
  })

  it('promises: #1–#3 reject with CancelledError (abort), #4 resolves', () => {
    const run = runOf('restart')
    expect(run.promises).toEqual([
      { call: 1, status: 'rejected', error: 'CancelledError', reason: 'abort' },
      { call: 2, status: 'rejected', error: 'CancelledError', reason: 'abort' },
      { call: 3, status: 'rejected', error: 'CancelledError', reason: 'abort' },
      { call: 4, status: 'resolved', value: 4 },
    ])
    expect(run.settleOrder).toEqual([1, 2, 3, 4])
  })

  it('what each cancelled body threw (AbortError from sleep) is on task:exited, after the task ended', () => {
    const run = runOf('restart')
    expect(run.exits).toEqual([
      { call: 1, taskId: 1, threw: 'AbortError' },
      { call: 2, taskId: 2, threw: 'AbortError' },
      { call: 3, taskId: 3, threw: 'AbortError' },
    ])
    for (const lane of run.lanes.slice(0, 3)) {
      const exited = lane.marks.find((mark) => mark.kind === 'exited')
      expect(exited?.seq).toBeGreaterThan(lane.end!.seq)
    }
  })

  it('events: coordination:restart ×3, each naming the one before', () => {
    expect(runOf('restart').events).toEqual([
      {
        type: 'coordination:restart',
        coordinator: 'restart',
        intentId: 2,
        hash: HASH,
        cancelledPeerIds: [1],
      },
      {
        type: 'coordination:restart',
        coordinator: 'restart',
        intentId: 3,
        hash: HASH,
        cancelledPeerIds: [2],
      },
      {
        type: 'coordination:restart',
        coordinator: 'restart',
        intentId: 4,
        hash: HASH,
        cancelledPeerIds: [3],
      },
    ])
  })
})

describe('serialize', () => {
  it('bodies run: 4, one after another, in call order', () => {
    const run = runOf('serialize')
    expect(run.executions).toBe(4)
    expect(run.bodies).toEqual([1, 2, 3, 4])
    const starts = startSeqs(run)
    const ends = endSeqs(run)
    for (let call = 2; call <= 4; call++) {
      // The body of call n starts only after call n-1 ended.
      expect(starts[call - 1]).toBeGreaterThan(ends[call - 2]!)
    }
    // Until then it waited parked by the coordinator.
    expect(run.lanes.map((lane) => lane.segments.map((segment) => segment.state))).toEqual([
      ['idle', 'queued', 'running'],
      ['idle', 'parked:coordinator', 'queued', 'running'],
      ['idle', 'parked:coordinator', 'queued', 'running'],
      ['idle', 'parked:coordinator', 'queued', 'running'],
    ])
  })

  it('tasks: success ×4; promises: each its own value, settling in call order', () => {
    const run = runOf('serialize')
    expect(run.tasks).toEqual([
      { call: 1, taskId: 1, state: 'success' },
      { call: 2, taskId: 2, state: 'success' },
      { call: 3, taskId: 3, state: 'success' },
      { call: 4, taskId: 4, state: 'success' },
    ])
    expect(run.promises).toEqual([
      { call: 1, status: 'resolved', value: 1 },
      { call: 2, status: 'resolved', value: 2 },
      { call: 3, status: 'resolved', value: 3 },
      { call: 4, status: 'resolved', value: 4 },
    ])
    expect(run.settleOrder).toEqual([1, 2, 3, 4])
  })

  it('events: coordination:queued ×3 with the waiters ahead', () => {
    expect(runOf('serialize').events).toEqual([
      {
        type: 'coordination:queued',
        coordinator: 'serialize',
        intentId: 2,
        hash: HASH,
        position: 0,
      },
      {
        type: 'coordination:queued',
        coordinator: 'serialize',
        intentId: 3,
        hash: HASH,
        position: 1,
      },
      {
        type: 'coordination:queued',
        coordinator: 'serialize',
        intentId: 4,
        hash: HASH,
        position: 2,
      },
    ])
  })
})

describe('exhaust', () => {
  it('bodies run: 1', () => {
    const run = runOf('exhaust')
    expect(run.executions).toBe(1)
    expect(run.bodies).toEqual([1])
  })

  it('tasks: success, cancelled exhaust-dropped ×3; promises: #1 resolves, #2–#4 reject (no #1 value)', () => {
    const run = runOf('exhaust')
    expect(run.tasks).toEqual([
      { call: 1, taskId: 1, state: 'success' },
      { call: 2, taskId: 2, state: 'cancelled', cancelReason: 'exhaust-dropped' },
      { call: 3, taskId: 3, state: 'cancelled', cancelReason: 'exhaust-dropped' },
      { call: 4, taskId: 4, state: 'cancelled', cancelReason: 'exhaust-dropped' },
    ])
    expect(run.promises).toEqual([
      { call: 1, status: 'resolved', value: 1 },
      { call: 2, status: 'rejected', error: 'CancelledError', reason: 'exhaust-dropped' },
      { call: 3, status: 'rejected', error: 'CancelledError', reason: 'exhaust-dropped' },
      { call: 4, status: 'rejected', error: 'CancelledError', reason: 'exhaust-dropped' },
    ])
  })

  it('events: coordination:dropped ×3, each naming the running call', () => {
    expect(runOf('exhaust').events).toEqual(
      [2, 3, 4].map((intentId) => ({
        type: 'coordination:dropped',
        coordinator: 'exhaust',
        intentId,
        hash: HASH,
        peerId: 1,
      })),
    )
  })
})

describe('keepLatest', () => {
  it('bodies run: 2, the first and the latest, one after the other', () => {
    const run = runOf('keepLatest')
    expect(run.executions).toBe(2)
    expect(run.bodies).toEqual([1, 4])
    // #4 starts only after #1 ended: never two bodies of one key at once.
    expect(startSeqs(run)[3]).toBeGreaterThan(endSeqs(run)[0]!)
  })

  it('tasks: success, cancelled superseded ×2 (each by the next call), success; promises: #2–#4 resolve to #4’s value', () => {
    const run = runOf('keepLatest')
    expect(run.tasks).toEqual([
      { call: 1, taskId: 1, state: 'success' },
      { call: 2, taskId: 2, state: 'cancelled', cancelReason: 'superseded', cancelledBy: 3 },
      { call: 3, taskId: 3, state: 'cancelled', cancelReason: 'superseded', cancelledBy: 4 },
      { call: 4, taskId: 4, state: 'success' },
    ])
    expect(run.promises).toEqual([
      { call: 1, status: 'resolved', value: 1 },
      { call: 2, status: 'resolved', value: 4 },
      { call: 3, status: 'resolved', value: 4 },
      { call: 4, status: 'resolved', value: 4 },
    ])
  })

  it('events: coordination:queued ×3, each waiting alone (position 0)', () => {
    expect(
      runOf('keepLatest').events.map((event) => [
        event.type,
        event.coordinator,
        event.intentId,
        event.position,
      ]),
    ).toEqual([
      ['coordination:queued', 'keepLatest', 2, 0],
      ['coordination:queued', 'keepLatest', 3, 0],
      ['coordination:queued', 'keepLatest', 4, 0],
    ])
  })
})

describe('custom bounded(2)', () => {
  it('bodies run: 2', () => {
    const run = runOf('bounded(2)')
    expect(run.limit).toBe(2)
    expect(run.executions).toBe(2)
    expect(run.bodies).toEqual([1, 2])
  })

  it('tasks: success ×2, cancelled dedupe ×2; promises: #3, #4 resolve to #1’s value', () => {
    const run = runOf('bounded(2)')
    expect(run.tasks).toEqual([
      { call: 1, taskId: 1, state: 'success' },
      { call: 2, taskId: 2, state: 'success' },
      { call: 3, taskId: 3, state: 'cancelled', cancelReason: 'dedupe', cancelledBy: 1 },
      { call: 4, taskId: 4, state: 'cancelled', cancelReason: 'dedupe', cancelledBy: 1 },
    ])
    expect(run.promises).toEqual([
      { call: 1, status: 'resolved', value: 1 },
      { call: 2, status: 'resolved', value: 2 },
      { call: 3, status: 'resolved', value: 1 },
      { call: 4, status: 'resolved', value: 1 },
    ])
  })

  it('events: coordination:reuse ×2, stamped bounded', () => {
    expect(runOf('bounded(2)').events).toEqual([
      { type: 'coordination:reuse', coordinator: 'bounded', intentId: 3, hash: HASH, peerId: 1 },
      { type: 'coordination:reuse', coordinator: 'bounded', intentId: 4, hash: HASH, peerId: 1 },
    ])
  })
})

describe('bounded(1)', () => {
  it('is the dedupe row, cell for cell (its events stamped bounded)', () => {
    const dedupe = runOf('dedupe')
    expect(boundedOne.strategy).toBe('bounded(1)')
    expect(boundedOne.limit).toBe(1)
    expect(boundedOne.executions).toBe(dedupe.executions)
    expect(boundedOne.bodies).toEqual(dedupe.bodies)
    expect(boundedOne.tasks).toEqual(dedupe.tasks)
    expect(boundedOne.promises).toEqual(dedupe.promises)
    expect(boundedOne.events).toEqual(
      dedupe.events.map((event) => ({ ...event, coordinator: 'bounded' })),
    )
  })
})

describe('custom forgetful', () => {
  it('bodies run: 0', () => {
    const run = runOf('forgetful')
    expect(run.executions).toBe(0)
    expect(run.bodies).toEqual([])
  })

  it('tasks: cancelled orphaned-intent ×4; promises: all resolve to undefined', () => {
    const run = runOf('forgetful')
    expect(run.tasks).toEqual([
      { call: 1, taskId: 1, state: 'cancelled', cancelReason: 'orphaned-intent' },
      { call: 2, taskId: 2, state: 'cancelled', cancelReason: 'orphaned-intent' },
      { call: 3, taskId: 3, state: 'cancelled', cancelReason: 'orphaned-intent' },
      { call: 4, taskId: 4, state: 'cancelled', cancelReason: 'orphaned-intent' },
    ])
    // JSON has no undefined: a promise that resolved to undefined has no `value` field.
    expect(run.promises).toEqual([
      { call: 1, status: 'resolved' },
      { call: 2, status: 'resolved' },
      { call: 3, status: 'resolved' },
      { call: 4, status: 'resolved' },
    ])
    for (const promise of run.promises) expect(Object.hasOwn(promise, 'value')).toBe(false)
  })

  it('events: coordination:orphaned-intent ×4, stamped forgetful', () => {
    expect(runOf('forgetful').events).toEqual([
      { type: 'coordination:orphaned-intent', coordinator: 'forgetful', intentId: 1, hash: HASH },
      { type: 'coordination:orphaned-intent', coordinator: 'forgetful', intentId: 2, hash: HASH },
      { type: 'coordination:orphaned-intent', coordinator: 'forgetful', intentId: 3, hash: HASH },
      { type: 'coordination:orphaned-intent', coordinator: 'forgetful', intentId: 4, hash: HASH },
    ])
  })
})
