import { describe, expect, it } from 'vitest'
import {
  CancelledError,
  isCancelledError,
  isLegalTransition,
  isTerminalState,
  run,
  settle,
  type TaskState,
} from '../src/index.js'
import { flush, gate, recordedRuntime } from './helpers.js'

/** Every state of the kernel's design, listed here on its own: the kernel's tables are checked against it. */
const STATES: readonly TaskState[] = [
  'idle',
  'parked:shaper',
  'parked:coordinator',
  'parked:dependencies',
  'queued',
  'running',
  'parked:retry',
  'success',
  'error',
  'cancelled',
]

describe('the task state machine', () => {
  it('idle → queued → running → success, with the body started synchronously', async () => {
    const { runtime, transitions } = recordedRuntime()
    let started = false
    const task = run(runtime, async () => {
      started = true
      return 7
    })
    expect(started).toBe(true)
    expect(task.state).toBe('running')
    expect(await task).toBe(7)
    expect(task.state).toBe('success')
    expect(task.attempt).toBe(1)
    expect(transitions(task.id)).toEqual(['idle>queued', 'queued>running', 'running>success'])
  })

  it('a body returning a plain value succeeds before run() returns', () => {
    const { runtime } = recordedRuntime()
    const task = run(runtime, () => 'sync')
    expect(task.state).toBe('success')
  })

  it('running → error for a body that throws synchronously or rejects', async () => {
    const { runtime, transitions } = recordedRuntime()
    const boom = new Error('boom')
    const sync = run(runtime, () => {
      throw boom
    })
    const async_ = run(runtime, async () => {
      throw boom
    })
    await expect(sync).rejects.toBe(boom)
    await expect(async_).rejects.toBe(boom)
    expect(sync.state).toBe('error')
    expect(transitions(async_.id)).toEqual(['idle>queued', 'queued>running', 'running>error'])
  })

  it('queued → cancelled while waiting for a slot', async () => {
    const { runtime, transitions } = recordedRuntime({ concurrency: 1 })
    const hold = gate()
    run(runtime, () => hold.promise)
    const waiting = run(runtime, () => 'never')
    expect(waiting.state).toBe('queued')
    waiting.cancel()
    expect(waiting.state).toBe('cancelled')
    expect(waiting.cancelReason).toBe('abort')
    expect(transitions(waiting.id)).toEqual(['idle>queued', 'queued>cancelled'])
    await expect(waiting).rejects.toBeInstanceOf(CancelledError)
    hold.open()
  })

  it('terminal states are final: cancel() after success changes nothing', async () => {
    const { runtime, events } = recordedRuntime()
    const task = run(runtime, () => 1)
    const count = events.length
    task.cancel()
    expect(task.state).toBe('success')
    expect(task.cancelReason).toBeUndefined()
    expect(events.length).toBe(count)
  })

  it('the transition table allows exactly the legal transitions of the design', () => {
    const allowed = new Set([
      'idle>parked:shaper',
      'parked:shaper>idle',
      'idle>parked:coordinator',
      'parked:coordinator>parked:dependencies',
      'parked:coordinator>queued',
      'idle>parked:dependencies',
      'parked:dependencies>queued',
      'idle>queued',
      'queued>running',
      'running>success',
      'running>error',
      'running>parked:retry',
      'parked:retry>queued',
    ])
    for (const from of STATES) {
      for (const to of STATES) {
        const expected =
          !isTerminalState(from) &&
          (to === 'cancelled' || to === 'error' || allowed.has(`${from}>${to}`))
        expect(isLegalTransition(from, to), `${from} → ${to}`).toBe(expected)
      }
    }
  })

  it('settle() reports the task’s own ending and never rejects', async () => {
    const { runtime } = recordedRuntime()
    const ok = run(runtime, () => 1)
    const failed = run(runtime, () => Promise.reject(new Error('x')))
    const cancelled = run(runtime, (ctx) => ctx.sleep(1_000))
    cancelled.cancel()
    expect(await settle(ok)).toEqual({ status: 'success', value: 1 })
    const failure = await settle(failed)
    expect(failure.status).toBe('error')
    const cancel = await settle(cancelled)
    expect(cancel.status).toBe('cancelled')
    if (cancel.status === 'cancelled') {
      expect(cancel.reason).toBe('abort')
      expect(isCancelledError(cancel.error)).toBe(true)
    }
    await flush()
  })
})
