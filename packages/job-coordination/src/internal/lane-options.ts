import { assertKnownKeys } from '@vega/job-core'
import { describeValue } from './describe-value.js'

const LANE_OPTIONS: readonly string[] = ['concurrency', 'name']

/**
 * Checks the options of a per-key lane strategy (serialize, keepLatest):
 * `fn` is the factory the user called, `example` a valid options object for
 * the message, `defaultName` the coordinator's name when none is given.
 */
export function resolveLaneOptions(
  fn: string,
  options: { concurrency?: number | undefined; name?: string | undefined },
  example: string,
  defaultName: string,
): { readonly concurrency: number; readonly name: string } {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(
      `${fn}(options): options must be an object such as ${example}, got ${describeValue(options)}.`,
    )
  }
  assertKnownKeys(`${fn}(options)`, options, LANE_OPTIONS)
  const concurrency = options.concurrency ?? 1
  if (typeof concurrency !== 'number') {
    throw new TypeError(
      `${fn}({ concurrency }): concurrency must be a number, got ${describeValue(concurrency)}.`,
    )
  }
  if (
    !(
      concurrency === Number.POSITIVE_INFINITY ||
      (Number.isInteger(concurrency) && concurrency >= 1)
    )
  ) {
    throw new RangeError(
      `${fn}({ concurrency }): concurrency must be an integer ≥ 1 (or Infinity), got ${concurrency}. Use 1 for one call at a time per key.`,
    )
  }
  const name = options.name ?? defaultName
  if (typeof name !== 'string' || name.trim() === '') {
    throw new TypeError(
      `${fn}({ name }): name must be a non-empty string, got ${describeValue(name)}. Leave it out for '${defaultName}'.`,
    )
  }
  return { concurrency, name }
}
