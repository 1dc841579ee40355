import { systemClock } from '../clock.js'
import { shareReadings } from '../share-readings.js'
import type { Clock } from '../types/backend.js'

const systemNow = shareReadings(() => Date.now())

/**
 * The time the kernel stamps on what happens to tasks: a transition's
 * `since` (read by `inspect()`) and every event's `at`. With the system
 * clock, consecutive stamps of one synchronous stretch share one
 * `Date.now()` reading ({@link shareReadings}).
 *
 * A burst of `run()` calls, or the reactions of bodies that settled
 * together, moves many tasks in one stretch, and `Date.now()` costs as much
 * as the rest of a transition's bookkeeping. A shared reading is off by at
 * most the time its stretch's transitions took, a few microseconds under
 * the clock's 1 ms resolution. Only the system clock is shared: a clock
 * given to `createRuntime` is read every time, so a test may move it
 * between two calls. What it saves is in `bench/README.md` (Core 3).
 * Timers, windows and deadlines read their clock directly, never this.
 */
export function stampNow(clock: Clock): number {
  return clock === systemClock ? systemNow() : clock.now()
}
