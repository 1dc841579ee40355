import { describe, expect, it } from 'vitest'
import {
  type Backend,
  type BackendJob,
  createRuntime,
  pause,
  type RuntimeOptions,
  resume,
  run,
  setConcurrency,
} from '../src/index.js'

function rejects(
  options: RuntimeOptions,
  type: typeof TypeError | typeof RangeError,
  message: RegExp,
) {
  expect(() => createRuntime(options)).toThrow(type)
  expect(() => createRuntime(options)).toThrow(message)
}

describe('runtime-control options are checked at createRuntime', () => {
  it('rateLimit', () => {
    rejects(
      { rateLimit: 5 as never },
      TypeError,
      /createRuntime\(\{ rateLimit \}\): rateLimit must be \{ limit, interval, window\? \}, got 5/,
    )
    rejects(
      { rateLimit: { limit: 0, interval: 100 } },
      RangeError,
      /rateLimit: \{ limit \} \}\): limit must be an integer ≥ 1.*got 0/,
    )
    rejects({ rateLimit: { limit: 2.5, interval: 100 } }, RangeError, /got 2\.5/)
    rejects(
      { rateLimit: { limit: 1, interval: 0 } },
      RangeError,
      /rateLimit: \{ interval \} \}\): interval must be a finite number of milliseconds > 0, got 0/,
    )
    rejects(
      { rateLimit: { limit: 1, interval: Number.POSITIVE_INFINITY } },
      RangeError,
      /got Infinity/,
    )
    rejects(
      { rateLimit: { limit: 1, interval: 10, window: 'rolling' as never } },
      TypeError,
      /window must be 'fixed' or 'sliding', got 'rolling'/,
    )
  })

  it('maxQueued and overflow', () => {
    rejects(
      { maxQueued: -1 },
      RangeError,
      /createRuntime\(\{ maxQueued \}\): maxQueued must be an integer ≥ 0 or Infinity, got -1/,
    )
    rejects({ maxQueued: '10' as never }, RangeError, /got '10'/)
    rejects(
      { maxQueued: 1, overflow: 'drop-newest' as never },
      TypeError,
      /overflow must be 'reject-new' or 'drop-oldest', got 'drop-newest'/,
    )
    rejects(
      { overflow: 'drop-oldest' },
      TypeError,
      /overflow applies only with maxQueued; pass maxQueued too/,
    )
  })

  it('abandonAfter and onUnobservedError', () => {
    rejects(
      { abandonAfter: -5 },
      RangeError,
      /createRuntime\(\{ abandonAfter \}\) must be a finite number of milliseconds ≥ 0, got -5/,
    )
    rejects(
      { onUnobservedError: true as never },
      TypeError,
      /onUnobservedError must be a function \(error, task\) => void or false, got true/,
    )
    rejects({ onUnobservedError: 'log' as never }, TypeError, /got 'log'/)
    expect(() => createRuntime({ abandonAfter: Number.POSITIVE_INFINITY })).not.toThrow()
  })

  it('defaults', () => {
    rejects(
      { defaults: 3 as never },
      TypeError,
      /createRuntime\(\{ defaults \}\): defaults must be an object/,
    )
    rejects(
      { defaults: { label: 'x' } as never },
      TypeError,
      /unknown default 'label'; defaults takes timeout, retry and priority/,
    )
    rejects(
      { defaults: { priority: Number.NaN } },
      TypeError,
      /defaults: \{ priority \} \}\): priority must be a finite number, got NaN/,
    )
    rejects(
      { defaults: { timeout: -1 } },
      RangeError,
      /createRuntime\(\{ defaults: \{ timeout \} \}\) must be a finite number/,
    )
    rejects(
      { defaults: { timeout: { total: 'soon' as never } } },
      RangeError,
      /defaults: \{ timeout: \{ total \} \} \}\).*got 'soon'/,
    )
    rejects(
      { defaults: { retry: 0 } },
      RangeError,
      /createRuntime\(\{ defaults: \{ retry \} \}\): attempts must be a whole number ≥ 1/,
    )
    rejects(
      { defaults: { retry: { attempts: 2, retryIf: 1 as never } } },
      TypeError,
      /defaults: \{ retry: \{ retryIf \} \} \}\): retryIf must be a function/,
    )
  })
})

/** A minimal custom backend with no optional capability: every job starts at once. */
function bareBackend(): Backend {
  let running = 0
  return {
    enqueue: (job: BackendJob) => {
      running++
      job.start()
    },
    withdraw: () => {},
    release: () => {
      running--
    },
    onPreCancel: () => () => {},
    preCancel: () => {},
    queued: 0,
    get running() {
      return running
    },
  }
}

describe('a backend without a capability declines with a TypeError naming it', () => {
  it('pause and setConcurrency', async () => {
    const runtime = createRuntime({ backend: bareBackend() })
    expect(() => pause(runtime)).toThrow(TypeError)
    expect(() => pause(runtime)).toThrow(
      /pause\(runtime\): the runtime's backend \(a custom backend\) does not support the 'setGate' capability: it has no setGate\(\) and wake\(\)/,
    )
    expect(() => setConcurrency(runtime, 2)).toThrow(
      /does not support the 'setConcurrency' capability/,
    )
    resume(runtime) // never paused: nothing to do, nothing to decline
    expect(await run(runtime, () => 1)).toBe(1)
  })

  it('rateLimit and drop-oldest at createRuntime', () => {
    expect(() =>
      createRuntime({ backend: bareBackend(), rateLimit: { limit: 1, interval: 10 } }),
    ).toThrow(/createRuntime\(\{ rateLimit \}\): .*does not support the 'setGate' capability/)
    expect(() =>
      createRuntime({ backend: bareBackend(), maxQueued: 1, overflow: 'drop-oldest' }),
    ).toThrow(
      /createRuntime\(\{ overflow: 'drop-oldest' \}\): .*does not support the 'dropCandidate' capability/,
    )
    // reject-new needs nothing from the backend.
    expect(() => createRuntime({ backend: bareBackend(), maxQueued: 1 })).not.toThrow()
  })
})
