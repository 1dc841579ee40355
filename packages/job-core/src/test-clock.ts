import { assertKnownKeys } from './assert-known-keys.js'
import { nextMacrotask as flushPromises } from './internal/promises.js'
import { describeValue } from './internal/validate.js'
import type { TestClock, TimerHandle } from './types/backend.js'

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
export function createTestClock(options: { now?: number | undefined } = {}): TestClock {
  assertKnownKeys('createTestClock(options)', options, ['now'])
  let now = options.now ?? 0
  if (typeof now !== 'number' || !Number.isFinite(now))
    throw new RangeError(
      `createTestClock({ now }): now must be a finite number, got ${describeValue(now)}.`,
    )
  let nextId = 1
  // Live timers by id; the heap may still hold cleared ones, skipped when they surface.
  const timers = new Map<number, FakeTimer>()
  const heap = new TimerHeap()

  // Removes and returns the earliest live timer due at or before `until`.
  const takeDue = (until: number): FakeTimer | undefined => {
    for (let top = heap.peek(); top !== undefined; top = heap.peek()) {
      if (timers.get(top.id) !== top) {
        heap.pop()
        continue
      }
      if (top.due > until) return undefined
      heap.pop()
      return top
    }
    return undefined
  }

  const fire = async (timer: FakeTimer) => {
    timers.delete(timer.id)
    now = Math.max(now, timer.due)
    // A plain call, as for any timer callback: no internal object as `this`.
    const callback = timer.callback
    callback()
    await flushPromises()
  }

  return {
    now: () => now,
    setTimeout(callback: () => void, ms: number): TimerHandle {
      const id = nextId++
      // As with the platform's setTimeout, a negative or NaN delay means "as soon as possible".
      const timer: FakeTimer = { id, due: ms > 0 ? now + ms : now, callback }
      timers.set(id, timer)
      heap.push(timer)
      return id
    },
    clearTimeout(handle: TimerHandle) {
      if (!timers.delete(handle as number)) return
      // Cleared timers stay in the heap until they surface; rebuild once they dominate it.
      if (heap.size > 64 && heap.size > 2 * timers.size) heap.rebuild(timers.values())
    },
    get pending() {
      return timers.size
    },
    async advance(ms: number) {
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
        throw new RangeError(`clock.advance(ms): ms must be a finite number ≥ 0, got ${ms}.`)
      }
      const until = now + ms
      await flushPromises()
      for (let timer = takeDue(until); timer !== undefined; timer = takeDue(until))
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
        await fire(takeDue(Number.POSITIVE_INFINITY)!)
      }
    },
  }
}

/** A binary min-heap of timers: earliest due first, then creation order. */
class TimerHeap {
  private items: FakeTimer[] = []

  get size(): number {
    return this.items.length
  }

  peek(): FakeTimer | undefined {
    return this.items[0]
  }

  push(timer: FakeTimer): void {
    const items = this.items
    let i = items.length
    items.push(timer)
    while (i > 0) {
      const parent = (i - 1) >> 1
      const above = items[parent]!
      if (!before(timer, above)) break
      items[i] = above
      i = parent
    }
    items[i] = timer
  }

  pop(): void {
    const items = this.items
    const last = items.pop()
    if (last === undefined || items.length === 0) return
    let i = 0
    for (;;) {
      const left = 2 * i + 1
      if (left >= items.length) break
      const right = left + 1
      const child = right < items.length && before(items[right]!, items[left]!) ? right : left
      const below = items[child]!
      if (!before(below, last)) break
      items[i] = below
      i = child
    }
    items[i] = last
  }

  rebuild(timers: Iterable<FakeTimer>): void {
    this.items = []
    for (const timer of timers) this.push(timer)
  }
}

function before(a: FakeTimer, b: FakeTimer): boolean {
  return a.due < b.due || (a.due === b.due && a.id < b.id)
}
