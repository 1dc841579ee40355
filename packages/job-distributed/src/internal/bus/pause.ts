/**
 * Resolves after `ms`, or at once when `signal` aborts. Its timer never keeps
 * the process alive: what waits on it (a retry delay, a back-off) belongs to
 * a consumer whose own connection or handlers do.
 *
 * @example
 * ```ts
 * await pause(250, signal) // a back-off a stop can cut short
 * ```
 */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    timer.unref()
    signal?.addEventListener('abort', done, { once: true })
  })
}
