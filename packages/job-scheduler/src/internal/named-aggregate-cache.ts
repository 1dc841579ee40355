import {
  type NamedAggregate,
  type NamedAggregateLike,
  toNamedAggregate,
} from '../named-aggregate.js'

// Aggregate names are constants of a service's code, a handful per process;
// the cap only guards against a caller that builds them from data.
const MAX_CACHED = 256
const parsed = new Map<string, NamedAggregate>()

/**
 * {@link toNamedAggregate} for `withAggregate`, which runs once per command:
 * a `"context.Aggregate"` string is parsed once and its frozen result shared
 * (two sliced strings and an object per call otherwise). Objects and invalid
 * strings go through `toNamedAggregate` every time, with its errors.
 */
export function namedAggregateOf(value: NamedAggregateLike): NamedAggregate {
  if (typeof value !== 'string') return toNamedAggregate(value)
  let named = parsed.get(value)
  if (named === undefined) {
    named = toNamedAggregate(value)
    if (parsed.size < MAX_CACHED) parsed.set(value, named)
  }
  return named
}
