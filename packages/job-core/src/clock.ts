import type { Clock } from './types/backend.js'

/**
 * The real clock: `Date.now()` and the platform's `setTimeout`. Frozen: it
 * is shared by every runtime that uses it.
 *
 * @example
 * ```ts
 * const rt = createRuntime({ clock: systemClock }) // the default
 * ```
 */
export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  setTimeout: (callback: () => void, ms: number) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle: unknown) =>
    globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
})
