import type { Clock, TimerHandle } from './clock.js'
import { nextMacrotask as flushPromises } from './internal/macrotask.js'

/**
 * A clock whose time moves only when told to. Pass it to `createRuntime({
 * clock })` and every kernel timer (sleep, retry delays, timeouts, shaper
 * windows) runs on it.
 *
 * @example
 * ```ts
 * const clock = createTestClock()
 * const rt = createRuntime({ clock })
 * const task = run(rt, (ctx) => ctx.sleep(1_000).then(() => 'done'))
 * await clock.advance(1_000)
 * await task // 'done'
 * ```
 */
export interface TestClock extends Clock {
  /** Moves time forward by `ms`, firing due timers in time order and letting promise callbacks run after each. */
  advance(ms: number): Promise<void>
  /** Fires every pending timer, including ones they schedule, up to `limit` timers. */
  runAll(limit?: number): Promise<void>
  /** Timers scheduled and not yet fired or cleared. */
  readonly pending: number
}

interface FakeTimer {
  readonly id: number
  readonly due: number
  readonly callback: () => void
}

/**
 * Creates a {@link TestClock} starting at `now` (default 0).
 *
 * @example
 * ```ts
 * const clock = createTestClock({ now: 1_700_000_000_000 })
 * clock.now() // 1700000000000
 * ```
 */
export function createTestClock(options: { now?: number } = {}): TestClock {
  let now = options.now ?? 0
  if (!Number.isFinite(now))
    throw new RangeError('createTestClock({ now }): now must be a finite number.')
  let nextId = 1
  const timers = new Map<number, FakeTimer>()

  const nextDue = (until: number): FakeTimer | undefined => {
    let first: FakeTimer | undefined
    for (const timer of timers.values()) {
      if (timer.due > until) continue
      if (
        first === undefined ||
        timer.due < first.due ||
        (timer.due === first.due && timer.id < first.id)
      ) {
        first = timer
      }
    }
    return first
  }

  const fire = async (timer: FakeTimer) => {
    timers.delete(timer.id)
    now = Math.max(now, timer.due)
    timer.callback()
    await flushPromises()
  }

  return {
    now: () => now,
    setTimeout(callback: () => void, ms: number): TimerHandle {
      const id = nextId++
      timers.set(id, { id, due: now + Math.max(0, ms), callback })
      return id
    },
    clearTimeout(handle: TimerHandle) {
      timers.delete(handle as number)
    },
    get pending() {
      return timers.size
    },
    async advance(ms: number) {
      if (!Number.isFinite(ms) || ms < 0) {
        throw new RangeError(`clock.advance(ms): ms must be a finite number ≥ 0, got ${ms}.`)
      }
      const until = now + ms
      await flushPromises()
      for (let timer = nextDue(until); timer !== undefined; timer = nextDue(until))
        await fire(timer)
      now = until
    },
    async runAll(limit = 10_000) {
      await flushPromises()
      for (let fired = 0; timers.size > 0; fired++) {
        if (fired >= limit) {
          throw new RangeError(
            `clock.runAll(): still ${timers.size} timers after ${limit}; a timer keeps rescheduling itself.`,
          )
        }
        await fire(nextDue(Number.POSITIVE_INFINITY)!)
      }
    },
  }
}
