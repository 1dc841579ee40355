import type { Clock } from './types/backend.js'

/**
 * The real clock: `Date.now()` and the platform's `setTimeout`.
 *
 * @example
 * ```ts
 * const rt = createRuntime({ clock: systemClock }) // the default
 * ```
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
}
