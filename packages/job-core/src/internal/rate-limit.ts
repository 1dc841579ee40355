import type { Clock, TimerHandle } from '../types/backend.js'

/**
 * `createRuntime({ rateLimit })`: counts body starts on the runtime clock.
 * Refusing a start arms one timer for the moment the window lets the next
 * one through, and `wake` then asks the backend to try again.
 */
export class RateLimiter {
  private readonly limit: number
  private readonly interval: number
  private readonly sliding: boolean
  private readonly clock: Clock
  private readonly wake: () => void
  // Sliding: the times of the last `limit` starts, a ring whose oldest entry is at `oldest`.
  private readonly starts: number[] = []
  private oldest = 0
  // Fixed: the open window and the starts it admitted.
  private windowStart = Number.NEGATIVE_INFINITY
  private inWindow = 0
  private timer: TimerHandle | undefined = undefined

  constructor(
    limit: number,
    interval: number,
    window: 'fixed' | 'sliding',
    clock: Clock,
    wake: () => void,
  ) {
    this.limit = limit
    this.interval = interval
    this.sliding = window === 'sliding'
    this.clock = clock
    this.wake = wake
  }

  /** Spends a start when the window has room; else arms the wake-up and says no. */
  tryAcquire(): boolean {
    // Once a start was refused, only the wake-up reopens: a waiting body
    // enters asynchronously (through its run() context), so windows that
    // rolled over during a long synchronous burst would release their
    // bodies all together when it ends.
    if (this.timer !== undefined) return false
    const now = this.clock.now()
    return this.sliding ? this.slide(now) : this.fix(now)
  }

  private slide(now: number): boolean {
    const starts = this.starts
    if (starts.length < this.limit) {
      starts.push(now)
      return true
    }
    const oldest = starts[this.oldest]!
    if (now - oldest >= this.interval) {
      starts[this.oldest] = now
      this.oldest = (this.oldest + 1) % this.limit
      return true
    }
    this.wakeIn(oldest + this.interval - now)
    return false
  }

  private fix(now: number): boolean {
    if (now >= this.windowStart + this.interval) {
      this.windowStart = now
      this.inWindow = 0
    }
    if (this.inWindow < this.limit) {
      this.inWindow++
      return true
    }
    this.wakeIn(this.windowStart + this.interval - now)
    return false
  }

  private wakeIn(ms: number): void {
    if (this.timer !== undefined) return
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined
      this.wake()
    }, ms)
  }
}
