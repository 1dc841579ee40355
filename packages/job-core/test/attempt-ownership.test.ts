import { describe, expect, it, vi } from 'vitest'
import {
  type Backend,
  type BackendJob,
  counts,
  createRuntime,
  IllegalStateError,
  run,
  settle,
  whenIdle,
  wrapAttempts,
} from '../src/index.js'
import { flush, gate } from './helpers.js'

// One attempt, one slot, one release: whatever a wrapper or a backend does
// wrong, a body runs only inside a slot, and a slot is given back once.

/** A FIFO backend with `limit` slots that counts what the kernel does with them. */
function countingBackend(limit: number, startTwice: 'let-throw' | 'catch' | 'no' = 'no') {
  const waiting: BackendJob[] = []
  const stats = { running: 0, most: 0, least: 0, releases: 0, refusals: [] as unknown[] }
  const startOne = (job: BackendJob) => {
    stats.running++
    stats.most = Math.max(stats.most, stats.running)
    job.start()
    if (startTwice === 'let-throw') job.start()
    else if (startTwice === 'catch') {
      try {
        job.start()
      } catch (error) {
        stats.refusals.push(error)
      }
    }
  }
  const backend: Backend = {
    enqueue(job) {
      if (stats.running < limit) startOne(job)
      else waiting.push(job)
    },
    withdraw(job) {
      const index = waiting.indexOf(job)
      if (index !== -1) waiting.splice(index, 1)
    },
    release() {
      stats.releases++
      stats.running--
      stats.least = Math.min(stats.least, stats.running)
      const next = waiting.shift()
      if (next !== undefined) startOne(next)
    },
    onPreCancel: () => () => {},
    preCancel() {},
    get queued() {
      return waiting.length
    },
    get running() {
      return stats.running
    },
  }
  return { backend, stats }
}

describe('a wrapper that calls enter() late', () => {
  it('is refused with a TypeError: under concurrency 1 no body ever runs, inside a slot or outside', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const late: Promise<unknown>[] = []
    wrapAttempts(runtime, (_info, enter) => {
      // The shape of an async tracer setup: enter() a microtask later.
      late.push(
        Promise.resolve()
          .then(enter)
          .then(
            () => 'entered',
            (error: unknown) => error,
          ),
      )
    })
    let inside = 0
    let bodies = 0
    const body = async () => {
      bodies++
      inside++
      await flush()
      inside--
    }
    const tasks = [run(runtime, body), run(runtime, body), run(runtime, body)]
    const outcomes = await Promise.all(tasks.map((task) => settle(task)))
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('error')
      expect(outcome.status === 'error' && (outcome.error as Error).message).toMatch(
        /returned without calling enter\(\).*the body never ran/,
      )
    }
    const lateResults = await Promise.all(late)
    expect(lateResults).toHaveLength(3)
    for (const result of lateResults) {
      expect(result).toBeInstanceOf(TypeError)
      expect((result as Error).message).toMatch(/called enter\(\) after it returned, for task #\d+/)
    }
    await flush()
    expect(bodies).toBe(0)
    expect(inside).toBe(0)
    expect(counts(runtime)).toEqual({ live: 0, parked: 0, queued: 0, running: 0, exiting: 0 })
  })

  it('a late enter() after a wrapper that threw is refused too', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    let enterLater!: () => unknown
    wrapAttempts(runtime, (_info, enter) => {
      enterLater = enter
      throw new Error('tracer not ready')
    })
    const body = vi.fn()
    const outcome = await settle(run(runtime, body))
    expect(outcome).toMatchObject({ status: 'error', error: { message: 'tracer not ready' } })
    expect(() => enterLater()).toThrow(/called enter\(\) after it returned/)
    expect(body).not.toHaveBeenCalled()
  })
})

describe('a backend that calls job.start() twice', () => {
  it('gets an IllegalStateError from the second call; a limit-1 backend never admits 2 nor goes negative', async () => {
    const { backend, stats } = countingBackend(1, 'catch')
    const runtime = createRuntime({ backend })
    let inside = 0
    let most = 0
    const body = async () => {
      inside++
      most = Math.max(most, inside)
      await flush()
      inside--
      return 'done'
    }
    const results = await Promise.all([run(runtime, body), run(runtime, body), run(runtime, body)])
    await whenIdle(runtime)
    expect(results).toEqual(['done', 'done', 'done'])
    expect(most).toBe(1)
    expect(stats.most).toBe(1)
    expect(stats.least).toBe(0)
    expect(stats.running).toBe(0)
    expect(stats.releases).toBe(3)
    expect(stats.refusals).toHaveLength(3)
    for (const refusal of stats.refusals) {
      expect(refusal).toBeInstanceOf(IllegalStateError)
      expect((refusal as Error).message).toMatch(
        /called job\.start\(\) again for task #\d+ \(attempt 1\)/,
      )
    }
  })

  it('that lets the refusal escape from enqueue: the task ends in error with it as cause; the slot is still released once', async () => {
    const { backend, stats } = countingBackend(1, 'let-throw')
    const runtime = createRuntime({ backend })
    const body = gate<string>()
    const task = run(runtime, () => body.promise)
    // The body started (once) and keeps its slot until it leaves.
    expect(task.state).toBe('error')
    expect(counts(runtime)).toMatchObject({ live: 0, running: 1, exiting: 1 })
    const outcome = await settle(task)
    expect(outcome.status === 'error' && (outcome.error as Error).message).toMatch(
      /backend threw from enqueue\(job\) for task #1/,
    )
    expect(outcome.status === 'error' && (outcome.error as Error).cause).toBeInstanceOf(
      IllegalStateError,
    )
    body.open('late')
    await whenIdle(runtime)
    expect(stats).toMatchObject({ running: 0, most: 1, least: 0, releases: 1 })
    expect(counts(runtime)).toEqual({ live: 0, parked: 0, queued: 0, running: 0, exiting: 0 })
  })
})
