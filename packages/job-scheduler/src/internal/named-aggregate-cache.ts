import {
  type NamedAggregate,
  type NamedAggregateLike,
  toNamedAggregate,
} from '../named-aggregate.js'
import { NamedMemo } from './named-memo.js'

// Aggregate names are constants of a service's code, a handful per process;
// the cap only guards against a caller that builds them from data.
const MAX_CACHED = 256
const parsed = new Map<string, NamedAggregate>()
/** The one frozen named aggregate per `(contextName, aggregateName)`, whatever form named it. */
const canonical = new NamedMemo<NamedAggregate>()
let canonicalCount = 0

/**
 * {@link toNamedAggregate} for `withAggregate`, which runs once per command:
 * a `"context.Aggregate"` string is parsed once, and an object read and
 * copied once, and every call naming the same aggregate (either way) shares
 * one frozen result; `withAggregate` keeps its bindings by that identity.
 * Invalid values go through `toNamedAggregate` every time, with its errors.
 */
export function namedAggregateOf(value: NamedAggregateLike): NamedAggregate {
  if (typeof value !== 'string') {
    // A memo hit means these two strings were validated before.
    const object = typeof value === 'object' && value !== null ? value : undefined
    return (
      canonical.get(object?.contextName, object?.aggregateName) ??
      canonicalOf(toNamedAggregate(value))
    )
  }
  // A service names one aggregate type at a time, usually with one string
  // constant: identical strings compare by reference, before any map read.
  if (value === lastString) return lastParsed as NamedAggregate
  let named = parsed.get(value)
  if (named === undefined) {
    named = canonicalOf(toNamedAggregate(value))
    if (parsed.size < MAX_CACHED) parsed.set(value, named)
  }
  lastString = value
  lastParsed = named
  return named
}

let lastString: string | undefined
let lastParsed: NamedAggregate | undefined

function canonicalOf(named: NamedAggregate): NamedAggregate {
  const known = canonical.get(named.contextName, named.aggregateName)
  if (known !== undefined) return known
  if (canonicalCount < MAX_CACHED) {
    canonicalCount++
    canonical.set(named.contextName, named.aggregateName, named)
  }
  return named
}
