/**
 * An opaque timer handle returned by {@link Clock.setTimeout}.
 *
 * @example
 * ```ts
 * const handle: TimerHandle = clock.setTimeout(() => {}, 10)
 * clock.clearTimeout(handle)
 * ```
 */
export type TimerHandle = unknown

/**
 * Where the kernel reads time and sets timers. Every timer in the kernel
 * (sleep, retry delays, timeouts, shaper windows) goes through the runtime's
 * clock, so a test clock makes them all deterministic.
 *
 * @example
 * ```ts
 * const rt = createRuntime({ clock: createTestClock() })
 * ```
 */
export interface Clock {
  /** Milliseconds, monotonic enough for durations; epoch ms for the system clock. */
  now(): number
  setTimeout(callback: () => void, ms: number): TimerHandle
  clearTimeout(handle: TimerHandle): void
}

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
