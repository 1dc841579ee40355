import {
  cancelAll,
  isCancelledError,
  isTimeoutError,
  type RunOptions,
  type Runtime,
  run,
  type Task,
  type TaskContext,
  type TestClock,
} from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import {
  type Coordinator,
  createKeepLatestCoordinator,
  createSerializeCoordinator,
  inspectCoordination,
  keepLatestCoordinator,
  withCoordinator,
} from '../src/index.js'
import { flush, harness } from './support.js'

/** How long a stubborn body keeps writing: it never looks at its signal. */
const WRITE = 40
/** When the fault (cancel, timeout) hits the calls in flight. */
const FAULT_AT = 10

/**
 * Bodies that count themselves in and out, measured inside the body (not
 * from task states): `inside` goes up on entry and down in `finally`.
 */
function probe(clock: TestClock) {
  let inside = 0
  let most = 0
  const entered = new Map<number, number>()
  const left = new Map<number, number>()
  const body =
    (call: number, stubborn: boolean) =>
    async (ctx: TaskContext): Promise<number> => {
      inside++
      most = Math.max(most, inside)
      entered.set(call, clock.now())
      try {
        if (stubborn) await new Promise<void>((resolve) => clock.setTimeout(resolve, WRITE))
        else await ctx.sleep(WRITE)
        return call
      } finally {
        inside--
        left.set(call, clock.now())
      }
    }
  return {
    body,
    entered,
    left,
    get inside() {
      return inside
    },
    get most() {
      return most
    },
  }
}

interface Fault {
  readonly name: string
  /** Options of the calls that hold the slots. */
  readonly options: RunOptions
  /** Applied at FAULT_AT to the calls holding the slots (the waiter is issued after it for cancelAll). */
  readonly hit: (runtime: Runtime, holders: readonly Task<number>[]) => void
  /** Whether the waiting call is issued after the fault rather than before. */
  readonly waiterAfter: boolean
  readonly expectHolder: (error: unknown) => boolean
}

const faults: Fault[] = [
  {
    name: 'cancel',
    options: {},
    hit: (_runtime, holders) => {
      for (const task of holders) task.cancel()
    },
    waiterAfter: false,
    expectHolder: (error) => isCancelledError(error) && error.reason === 'abort',
  },
  {
    name: 'attempt timeout',
    options: { timeout: { attempt: FAULT_AT } },
    hit: () => {},
    waiterAfter: false,
    expectHolder: (error) => isTimeoutError(error) && error.phase === 'attempt',
  },
  {
    name: 'total timeout',
    options: { timeout: { total: FAULT_AT } },
    hit: () => {},
    waiterAfter: false,
    expectHolder: (error) => isTimeoutError(error) && error.phase === 'total',
  },
  {
    name: 'cancelAll',
    options: {},
    hit: (runtime) => cancelAll(runtime),
    waiterAfter: true,
    expectHolder: (error) => isCancelledError(error) && error.reason === 'abort',
  },
]

const strategies: [string, number, () => Coordinator][] = [
  ['serialize', 1, () => createSerializeCoordinator().coordinator],
  [
    'serialize({ concurrency: 2 })',
    2,
    () => createSerializeCoordinator({ concurrency: 2 }).coordinator,
  ],
  ['keepLatestCoordinator', 1, () => keepLatestCoordinator],
  [
    'createKeepLatestCoordinator({ concurrency: 3 })',
    3,
    () => createKeepLatestCoordinator({ concurrency: 3 }),
  ],
]

describe.each(strategies)(
  '%s: the next body of a key starts after the previous body exits',
  (_name, limit, make) => {
    it.each(faults)('$name, with bodies that ignore their signal', async (fault) => {
      const { clock, runtime } = harness()
      const coordinator = make()
      const p = probe(clock)
      const call = (i: number, stubborn: boolean, options: RunOptions = {}) =>
        run(runtime, withCoordinator(p.body(i, stubborn), coordinator, { key: 'doc' }), options)
      const holders = Array.from({ length: limit }, (_, i) => call(i + 1, true, fault.options))
      const holderErrors = holders.map((task) => task.promise.catch((error: unknown) => error))
      let waiter = fault.waiterAfter ? undefined : call(limit + 1, false)
      expect(p.inside).toBe(limit)
      await clock.advance(FAULT_AT)
      fault.hit(runtime, holders)
      waiter ??= call(limit + 1, false)
      // The callers hear of the fault at once…
      for (const error of await Promise.all(holderErrors))
        expect(fault.expectHolder(error)).toBe(true)
      // …but the stubborn bodies are still inside, so the waiter has not started.
      await flush()
      expect(p.entered.has(limit + 1)).toBe(false)
      expect(waiter.state).toBe('parked:coordinator')
      await clock.advance(WRITE - FAULT_AT)
      // The last holder left at WRITE; only then did the waiter enter.
      expect(p.entered.get(limit + 1)).toBe(WRITE)
      expect(Math.max(...p.left.values())).toBe(WRITE)
      await clock.advance(WRITE)
      expect(await waiter).toBe(limit + 1)
      expect(p.most).toBe(limit)
      expect(inspectCoordination(runtime)).toMatchObject({
        keys: 0,
        tasks: 0,
        strategyKeys: 0,
        waiters: 0,
      })
    })

    it('a cancelled body that honours its signal frees its slot as soon as it leaves', async () => {
      const { clock, runtime } = harness()
      const coordinator = make()
      const p = probe(clock)
      const call = (i: number) =>
        run(runtime, withCoordinator(p.body(i, false), coordinator, { key: 'doc' }))
      const holders = Array.from({ length: limit }, (_, i) => call(i + 1))
      for (const task of holders) task.promise.catch(() => {})
      const waiter = call(limit + 1)
      await clock.advance(FAULT_AT)
      holders[0]!.cancel()
      // Cancelled at once for the caller; the body leaves at its next cancellation point.
      expect(holders[0]!.state).toBe('cancelled')
      expect(waiter.state).toBe('parked:coordinator')
      await flush()
      expect(p.left.get(1)).toBe(FAULT_AT)
      expect(p.entered.get(limit + 1)).toBe(FAULT_AT)
      await clock.runAll()
      expect(await waiter).toBe(limit + 1)
      expect(p.most).toBe(limit)
    })
  },
)

describe('the autosave of issue 10', () => {
  it('a timed-out write that keeps writing is never overtaken by the next save', async () => {
    const { clock, runtime } = harness()
    const serialize = createSerializeCoordinator()
    const writes: string[] = []
    const save = (text: string, ms: number) =>
      withCoordinator(
        async () => {
          writes.push(`start ${text} @${clock.now()}`)
          await new Promise<void>((resolve) => clock.setTimeout(resolve, ms)) // cannot be interrupted
          writes.push(`end ${text} @${clock.now()}`)
        },
        serialize.coordinator,
        { key: ['doc', 1] },
      )
    const first = run(runtime, save('v1', 40), { timeout: { attempt: 10 } })
    const failed = first.promise.catch((error: unknown) => error)
    const second = run(runtime, save('v2', 5))
    await clock.advance(10)
    expect(isTimeoutError(await failed)).toBe(true)
    await clock.runAll()
    await second
    expect(writes).toEqual(['start v1 @0', 'end v1 @40', 'start v2 @40', 'end v2 @45'])
  })
})
