import { systemClock } from '../clock.js'
import type { Clock } from '../types/backend.js'

/**
 * The time the kernel stamps on what happens to tasks: a transition's
 * `since` (read by `inspect()`) and every event's `at`. With the system
 * clock, up to {@link READING_USES} consecutive stamps of one synchronous
 * stretch share one `Date.now()` reading, which expires once the
 * microtasks queued before it was taken have run.
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
  return clock === systemClock ? sharedSystemNow() : clock.now()
}

const READING_USES = 16

let reading = 0
let usesLeft = 0
let expiryQueued = false
const SETTLED = Promise.resolve()

function expire(): void {
  expiryQueued = false
  usesLeft = 0
}

function sharedSystemNow(): number {
  if (usesLeft > 0) {
    usesLeft--
    return reading
  }
  reading = Date.now()
  usesLeft = READING_USES - 1
  if (!expiryQueued) {
    expiryQueued = true
    // A reaction of a settled promise, not queueMicrotask: Node wraps each
    // queueMicrotask callback in an AsyncResource.
    SETTLED.then(expire)
  }
  return reading
}
