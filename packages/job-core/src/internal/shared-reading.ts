/**
 * The system clock's reading for a task's bookkeeping time (its `since`,
 * read only by `inspect()`), shared by up to {@link READING_USES}
 * consecutive transitions of one synchronous stretch and expiring once the
 * microtasks queued before it was taken have run.
 *
 * A burst of `run()` calls, or the reactions of bodies that settled
 * together, moves many tasks in one stretch, and `Date.now()` costs as much
 * as the rest of a transition's bookkeeping when nobody listens. A shared
 * reading is off by at most the time its stretch's transitions took, a few
 * microseconds under its 1 ms resolution; the `at` of an event is always a
 * fresh reading. Only the system clock is shared: a test clock is read every
 * time, so a test may move it between two calls. What it saves is in
 * `bench/README.md` (Core 3).
 */
const READING_USES = 16

let reading = 0
let usesLeft = 0
let expiryQueued = false
const SETTLED = Promise.resolve()

function expire(): void {
  expiryQueued = false
  usesLeft = 0
}

/** `Date.now()`, or the reading an earlier transition of this stretch took. */
export function sharedSystemNow(): number {
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
