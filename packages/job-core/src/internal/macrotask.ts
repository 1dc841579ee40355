/**
 * Resolves after the current macrotask: every promise callback queued so far
 * (and those they queue) has run by then. Not a timer: it does not wait for
 * time, so it stays outside the runtime clock.
 */
export function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => {
    if (typeof setImmediate === 'function') setImmediate(resolve)
    else setTimeout(resolve, 0)
  })
}
