import { assertKnownKeys } from './assert-known-keys.js'
import { validateMs } from './internal/validate.js'
import type { ThrottleOptions, ThrottleShaper } from './types/shaper.js'

const THROTTLE_OPTIONS: readonly string[] = ['leading', 'trailing']

/**
 * A throttle shaper: at most one dispatch per `ms` per key. The first call
 * runs at once (leading); the last call of the window runs at its end
 * (trailing) and opens the next window, so dispatches are never closer than
 * `ms`. Calls in between end `cancelled` / `superseded`, settling with the
 * survivor's outcome. Throws `RangeError` for a negative, `NaN` or infinite
 * `ms`, or both edges off.
 *
 * @example
 * ```ts
 * const save = withShaper(saveDraft, throttle(1_000), { key: ['draft', id] })
 * run(runtime, save) // runs now
 * run(runtime, save) // merged: runs (as the window's last call) 1 s after the first
 *
 * const ping = withShaper(sendPing, throttle(5_000, { trailing: false }), { key: 'ping' })
 * ```
 */
export function throttle(ms: number, options: ThrottleOptions = {}): ThrottleShaper {
  validateMs(ms, 'throttle(ms)')
  assertKnownKeys('throttle(ms, options)', options, THROTTLE_OPTIONS)
  const leading = options.leading ?? true
  const trailing = options.trailing ?? true
  if (!leading && !trailing) {
    throw new RangeError(
      'throttle(ms, options): leading and trailing are both false, so no call would ever run. Leave one of them on.',
    )
  }
  return Object.freeze({ kind: 'throttle', ms, leading, trailing })
}
