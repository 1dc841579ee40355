/**
 * A JSON-safe value: what {@link toWire} produces and what every encoded field
 * of an event holds. `JSON.parse(JSON.stringify(v))` gives `v` back, deep-equal.
 *
 * @example
 * ```ts
 * const value: WireValue = { id: 1, tags: ['a'], error: { __type: 'Circular' } }
 * ```
 */
export type WireValue = null | boolean | number | string | readonly WireValue[] | WireObject

/**
 * A JSON object whose values are {@link WireValue}s.
 *
 * @example
 * ```ts
 * const fields: WireObject = { reason: 'abort', taskId: 3 }
 * ```
 */
export interface WireObject {
  readonly [key: string]: WireValue
}

/**
 * An `Error` (or anything branded as one) after encoding. `fields` holds the
 * error's other own enumerable properties (a `CancelledError`'s `reason`, a
 * `TimeoutError`'s `phase`, an `AggregateError`'s `errors`).
 *
 * @example
 * ```ts
 * const wire: WireError = { __type: 'Error', name: 'TypeError', message: 'bad', cause: { __type: 'Circular' } }
 * ```
 */
export type WireError = {
  readonly __type: 'Error'
  readonly name: string
  readonly message: string
  readonly stack?: string
  readonly cause?: WireValue
  readonly fields?: WireObject
}

/**
 * A function, by name only: its code is never sent.
 *
 * @example
 * ```ts
 * const wire: WireFunction = { __type: 'Function', name: 'fetchUser' }
 * ```
 */
export type WireFunction = {
  readonly __type: 'Function'
  readonly name: string
}

/**
 * A reference back to an object that is already being encoded higher up the
 * same path (a cycle). Shared, acyclic references are encoded in full.
 *
 * @example
 * ```ts
 * const wire: WireCircular = { __type: 'Circular' }
 * ```
 */
export type WireCircular = {
  readonly __type: 'Circular'
}

/**
 * A `bigint`, as its decimal digits.
 *
 * @example
 * ```ts
 * const wire: WireBigInt = { __type: 'BigInt', value: '9007199254740993' }
 * ```
 */
export type WireBigInt = {
  readonly __type: 'BigInt'
  readonly value: string
}

/**
 * A `symbol`, by description.
 *
 * @example
 * ```ts
 * const wire: WireSymbol = { __type: 'Symbol', description: 'token' }
 * ```
 */
export type WireSymbol = {
  readonly __type: 'Symbol'
  readonly description?: string
}

/**
 * The values JSON cannot carry, named.
 *
 * @example
 * ```ts
 * const kind: UnserializableKind = '-0'
 * ```
 */
export type UnserializableKind =
  | 'NaN'
  | 'Infinity'
  | '-Infinity'
  | '-0'
  | 'undefined'
  | 'Invalid Date'

/**
 * `NaN`, `±Infinity`, `-0`, `undefined` or an invalid `Date`.
 *
 * @example
 * ```ts
 * const wire: WireUnserializable = { __type: 'Unserializable', value: 'NaN' }
 * ```
 */
export type WireUnserializable = {
  readonly __type: 'Unserializable'
  readonly value: UnserializableKind
}

/**
 * A `Map` as its entry list. `size` is the real size; `entries` is shorter
 * when the encoder's item limit cut it.
 *
 * @example
 * ```ts
 * const wire: WireMap = { __type: 'Map', size: 1, entries: [['a', 1]] }
 * ```
 */
export type WireMap = {
  readonly __type: 'Map'
  readonly size: number
  readonly entries: readonly (readonly [WireValue, WireValue])[]
}

/**
 * A `Set` as its value list. `size` is the real size; `values` is shorter
 * when the encoder's item limit cut it.
 *
 * @example
 * ```ts
 * const wire: WireSet = { __type: 'Set', size: 2, values: [1, 2] }
 * ```
 */
export type WireSet = {
  readonly __type: 'Set'
  readonly size: number
  readonly values: readonly WireValue[]
}

/**
 * Binary data: an `ArrayBuffer`, a `DataView` or a typed array. Typed arrays
 * carry their `length` and their first elements in `values`.
 *
 * @example
 * ```ts
 * const wire: WireBinary = { __type: 'Binary', name: 'Uint8Array', byteLength: 3, length: 3, values: [1, 2, 3] }
 * ```
 */
export type WireBinary = {
  readonly __type: 'Binary'
  readonly name: string
  readonly byteLength: number
  readonly length?: number
  readonly values?: readonly WireValue[]
}

/**
 * An object without a JSON form worth sending (a `Promise`, a `WeakMap`, a
 * `WeakRef`…), by name.
 *
 * @example
 * ```ts
 * const wire: WireOpaque = { __type: 'Opaque', name: 'Promise' }
 * ```
 */
export type WireOpaque = {
  readonly __type: 'Opaque'
  readonly name: string
}

/**
 * What was left out because a depth, length or size limit was reached.
 * `preview` is a short description (or the start of a long string); `omitted`
 * counts the characters, items or keys that were dropped.
 *
 * @example
 * ```ts
 * const wire: WireTruncated = { __type: 'Truncated', preview: 'Array(5000)', omitted: 4900 }
 * ```
 */
export type WireTruncated = {
  readonly __type: 'Truncated'
  readonly preview: string
  readonly omitted?: number
}

/**
 * A value whose reading threw (a throwing getter, a revoked proxy).
 *
 * @example
 * ```ts
 * const wire: WireUnreadable = { __type: 'Unreadable', message: 'getter threw: TypeError: nope' }
 * ```
 */
export type WireUnreadable = {
  readonly __type: 'Unreadable'
  readonly message: string
}

/**
 * Every tagged form {@link toWire} may produce, discriminated by `__type`.
 * Consumers must tolerate a `__type` they do not know (a newer producer).
 *
 * @example
 * ```ts
 * function show(value: WireTagged): string {
 *   return value.__type === 'Error' ? `${value.name}: ${value.message}` : value.__type
 * }
 * ```
 */
export type WireTagged =
  | WireError
  | WireFunction
  | WireCircular
  | WireBigInt
  | WireSymbol
  | WireUnserializable
  | WireMap
  | WireSet
  | WireBinary
  | WireOpaque
  | WireTruncated
  | WireUnreadable
