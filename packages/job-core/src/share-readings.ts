/** Consecutive readings of one synchronous stretch that may share one clock read. */
const READING_USES = 16

/** Its reactions run as microtasks, in the order they were registered. */
const SETTLED: Promise<void> = Promise.resolve()

/**
 * A clock read that consecutive callers of one synchronous stretch share:
 * the returned function calls `read()` at most once per 16 calls, and a
 * reading expires once the microtasks queued before it was taken have run.
 *
 * For timestamps on a hot path (the kernel's event `at` and task `since`,
 * a scheduler's admission and release times), where the clock read costs
 * as much as the rest of the bookkeeping and a burst stamps many things in
 * one stretch. A shared reading is off by at most the time its stretch's
 * work took. Not for timers or deadlines, and not for a clock a test moves
 * between two calls: read those directly.
 *
 * @example
 * ```ts
 * const stamp = shareReadings(() => performance.now())
 * for (const message of burst) message.receivedAt = stamp() // one read per 16 messages
 * ```
 */
export function shareReadings(read: () => number): () => number {
  let reading = 0
  let usesLeft = 0
  let expiryQueued = false
  const expire = (): void => {
    expiryQueued = false
    usesLeft = 0
  }
  return () => {
    if (usesLeft > 0) {
      usesLeft--
      return reading
    }
    reading = read()
    usesLeft = READING_USES - 1
    if (!expiryQueued) {
      expiryQueued = true
      // A reaction of a settled promise, not queueMicrotask: Node wraps each
      // queueMicrotask callback in an AsyncResource.
      SETTLED.then(expire)
    }
    return reading
  }
}
