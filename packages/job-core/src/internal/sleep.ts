import type { Clock } from '../types/backend.js'
import { validateMs } from './validate.js'

/**
 * `ctx.sleep(ms)`: resolves after `ms` on the runtime's clock, rejects with
 * an `AbortError` (its `cause` the signal's reason) when `signal` aborts.
 */
export function sleepOn(signal: AbortSignal, clock: Clock, ms: number): Promise<void> {
  validateMs(ms, 'ctx.sleep(ms)')
  if (signal.aborted) return Promise.reject(abortError(signal.reason))
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clock.clearTimeout(timer)
      reject(abortError(signal.reason))
    }
    const timer = clock.setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

function abortError(reason: unknown): Error {
  const error = new DOMException('The operation was aborted.', 'AbortError')
  Object.defineProperty(error, 'cause', { value: reason, configurable: true, writable: true })
  return error
}
