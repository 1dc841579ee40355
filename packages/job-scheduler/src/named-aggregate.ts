import { describe } from './internal/validate.js'

/**
 * An aggregate type inside a bounded context, as in Wow. Schedulers and
 * stats are per named aggregate, never per aggregate id.
 *
 * @example
 * ```ts
 * const order: NamedAggregate = { contextName: 'sales', aggregateName: 'Order' }
 * ```
 */
export interface NamedAggregate {
  readonly contextName: string
  readonly aggregateName: string
}

/**
 * Either a {@link NamedAggregate} or its `"context.Aggregate"` string form.
 *
 * @example
 * ```ts
 * const a: NamedAggregateLike = 'sales.Order'
 * const b: NamedAggregateLike = { contextName: 'sales', aggregateName: 'Order' }
 * ```
 */
export type NamedAggregateLike = string | NamedAggregate

/**
 * Materializes a named aggregate: a frozen `{ contextName, aggregateName }`
 * with nothing else (Wow's `materialize()`), from an object or a
 * `"context.Aggregate"` string. A string without a dot uses `defaultContext`
 * (like Wow's `toNamedAggregate(contextName)`); a string with a dot ignores
 * it. Anything else throws a `TypeError` saying what was expected.
 *
 * @example
 * ```ts
 * toNamedAggregate('sales.Order') // { contextName: 'sales', aggregateName: 'Order' }
 * toNamedAggregate('Order', 'sales') // the same
 * ```
 */
export function toNamedAggregate(
  value: NamedAggregateLike,
  defaultContext?: string,
): NamedAggregate {
  if (typeof value === 'string') {
    const dot = value.indexOf('.')
    if (dot === -1 && defaultContext !== undefined) return materialize(defaultContext, value, value)
    if (dot > 0 && dot === value.lastIndexOf('.') && dot < value.length - 1) {
      return materialize(value.slice(0, dot), value.slice(dot + 1), value)
    }
    throw new TypeError(
      `Expected a named aggregate as "context.Aggregate" (for example "sales.Order"), got ${describe(value)}.`,
    )
  }
  if (typeof value === 'object' && value !== null) {
    return materialize(value.contextName, value.aggregateName, value)
  }
  throw new TypeError(
    `Expected a named aggregate ("sales.Order" or { contextName, aggregateName }), got ${describe(value)}.`,
  )
}

function materialize(contextName: unknown, aggregateName: unknown, input: unknown): NamedAggregate {
  if (typeof contextName !== 'string' || contextName === '') {
    throw new TypeError(
      `A named aggregate needs a non-empty contextName, got ${describe(contextName)} in ${describe(input)}.`,
    )
  }
  if (typeof aggregateName !== 'string' || aggregateName === '') {
    throw new TypeError(
      `A named aggregate needs a non-empty aggregateName, got ${describe(aggregateName)} in ${describe(input)}.`,
    )
  }
  return Object.freeze({ contextName, aggregateName })
}
