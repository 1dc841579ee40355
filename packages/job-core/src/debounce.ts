import { assertKnownKeys } from './assert-known-keys.js'
import { validateMs } from './internal/validate.js'
import type { DebounceOptions, DebounceShaper } from './types/shaper.js'

const DEBOUNCE_OPTIONS: readonly string[] = ['leading', 'trailing', 'maxWait']

/**
 * A debounce shaper: calls with the same key less than `ms` apart are merged;
 * the last one survives and is dispatched `ms` after the last call. Merged
 * calls end `cancelled` / `superseded` (`cancelledBy` = the call that
 * superseded them) and their promises settle with the survivor's outcome.
 *
 * With `leading`, the first call of a burst is dispatched at once; with
 * `leading` and `trailing: false`, later calls in the window are merged into
 * that leader and get its outcome. `maxWait` bounds how long a steady stream
 * of calls may postpone the trailing dispatch. Windows are kept per shaper
 * value and key, and deleted when they close. Throws `RangeError` for a
 * negative, `NaN` or infinite `ms`/`maxWait`, `maxWait < ms`, or both edges off.
 *
 * @example
 * ```ts
 * const search = withShaper(fetchResults, debounce(300), { key: 'search' })
 * run(runtime, search) // only the last call of a typing burst runs
 *
 * // first keystroke at once, then at most every 2 s while typing goes on
 * const live = withShaper(fetchResults, debounce(300, { leading: true, maxWait: 2_000 }), { key: 'live' })
 * ```
 */
export function debounce(ms: number, options: DebounceOptions = {}): DebounceShaper {
  validateMs(ms, 'debounce(ms)')
  assertKnownKeys('debounce(ms, options)', options, DEBOUNCE_OPTIONS)
  const leading = options.leading ?? false
  const trailing = options.trailing ?? true
  if (!leading && !trailing) {
    throw new RangeError(
      'debounce(ms, options): leading and trailing are both false, so no call would ever run. Leave one of them on.',
    )
  }
  const maxWait = options.maxWait
  if (maxWait !== undefined) {
    validateMs(maxWait, 'debounce({ maxWait })')
    if (maxWait < ms) {
      throw new RangeError(
        `debounce(ms, { maxWait }): maxWait (${maxWait} ms) must be ≥ the window ms (${ms} ms); raise it or leave it out.`,
      )
    }
  }
  return Object.freeze({ kind: 'debounce', ms, leading, trailing, maxWait })
}
