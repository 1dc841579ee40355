import { assertKnownKeys, describeValue } from './internal/known-keys.js'
import type { UnserializableKind, WireObject, WireTruncated, WireValue } from './wire-value.js'

/**
 * Limits of {@link toWire}. Every limit bounds the output whatever the input:
 * a cut is marked with a `Truncated` value, never silent.
 *
 * @example
 * ```ts
 * toWire(bigPayload, { maxDepth: 4, maxItems: 20, maxStringLength: 200, stack: false })
 * ```
 */
export interface ToWireOptions {
  /** Containers nested deeper than this become `Truncated`. Default 10. */
  readonly maxDepth?: number | undefined
  /** Array items, object keys, Map/Set entries and typed-array elements kept per container. Default 100. */
  readonly maxItems?: number | undefined
  /** Longer strings become `Truncated` with their first characters as `preview`. Default 10 000. */
  readonly maxStringLength?: number | undefined
  /** Total values encoded per call; past it, containers are cut. Default 5 000. */
  readonly maxNodes?: number | undefined
  /** Whether an error's `stack` is sent. Default `true`; recordings meant to be compared turn it off. */
  readonly stack?: boolean | undefined
}

interface Limits {
  readonly maxDepth: number
  readonly maxItems: number
  readonly maxStringLength: number
  readonly maxNodes: number
  readonly stack: boolean
}

const DEFAULT_LIMITS: Limits = {
  maxDepth: 10,
  maxItems: 100,
  maxStringLength: 10_000,
  maxNodes: 5_000,
  stack: true,
}

// Objects whose own properties say nothing useful about them.
const OPAQUE_TAGS: ReadonlySet<string> = new Set([
  'Promise',
  'WeakMap',
  'WeakSet',
  'WeakRef',
  'FinalizationRegistry',
  'Generator',
  'AsyncGenerator',
])

interface Walk {
  readonly limits: Limits
  /** The objects on the current path, to tell a cycle from a shared reference. */
  readonly ancestors: Set<object>
  budget: number
}

/**
 * Encodes any value as a JSON-safe {@link WireValue}. Never throws for any
 * value: errors keep `name`, `message`, `stack` and `cause`; cycles,
 * functions, `bigint`, symbols, `NaN`, `±Infinity`, `-0` and `undefined`
 * become tagged objects; a `Date` becomes its ISO string; `Map`/`Set` become
 * entry lists; depth, item count, string length and total size are bounded.
 * Throws `RangeError` only for invalid `options`.
 *
 * @example
 * ```ts
 * const error = new Error('outer', { cause: new Error('inner') })
 * toWire(error, { stack: false })
 * // { __type: 'Error', name: 'Error', message: 'outer',
 * //   cause: { __type: 'Error', name: 'Error', message: 'inner' } }
 * toWire({ n: -0, big: 10n }) // { n: { __type: 'Unserializable', value: '-0' }, big: { __type: 'BigInt', value: '10' } }
 * ```
 */
export function toWire(value: unknown, options?: ToWireOptions): WireValue {
  const walk: Walk = { limits: resolveLimits(options), ancestors: new Set(), budget: 0 }
  walk.budget = walk.limits.maxNodes
  return encode(value, 0, walk)
}

const LIMIT_NAMES: readonly string[] = [
  'maxDepth',
  'maxItems',
  'maxStringLength',
  'maxNodes',
  'stack',
]

function resolveLimits(options: ToWireOptions | undefined): Limits {
  if (options === undefined) return DEFAULT_LIMITS
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(
      `toWire(value, options): options must be an object when given, got ${describeValue(options)}.`,
    )
  }
  assertKnownKeys('toWire(value, options)', options, LIMIT_NAMES)
  return {
    maxDepth: positiveInteger(options.maxDepth, 'maxDepth', DEFAULT_LIMITS.maxDepth, 0),
    maxItems: positiveInteger(options.maxItems, 'maxItems', DEFAULT_LIMITS.maxItems, 0),
    maxStringLength: positiveInteger(
      options.maxStringLength,
      'maxStringLength',
      DEFAULT_LIMITS.maxStringLength,
      1,
    ),
    maxNodes: positiveInteger(options.maxNodes, 'maxNodes', DEFAULT_LIMITS.maxNodes, 1),
    stack: options.stack ?? DEFAULT_LIMITS.stack,
  }
}

function positiveInteger(value: unknown, name: string, fallback: number, min: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new RangeError(
      `toWire(value, options): options.${name} must be an integer ≥ ${min}, got ${describeValue(value)}.`,
    )
  }
  return value
}

function encode(value: unknown, depth: number, walk: Walk): WireValue {
  walk.budget -= 1
  try {
    switch (typeof value) {
      case 'string':
        return encodeString(value, walk.limits.maxStringLength)
      case 'number':
        return encodeNumber(value)
      case 'boolean':
        return value
      case 'undefined':
        return unserializable('undefined')
      case 'bigint':
        return { __type: 'BigInt', value: value.toString() }
      case 'symbol':
        return value.description === undefined
          ? { __type: 'Symbol' }
          : { __type: 'Symbol', description: value.description }
      case 'function':
        return { __type: 'Function', name: readName(value) }
      default:
        return value === null ? null : encodeObject(value as object, depth, walk)
    }
  } catch (error) {
    return unreadable(error)
  }
}

function encodeNumber(value: number): WireValue {
  if (Number.isNaN(value)) return unserializable('NaN')
  if (value === Number.POSITIVE_INFINITY) return unserializable('Infinity')
  if (value === Number.NEGATIVE_INFINITY) return unserializable('-Infinity')
  if (Object.is(value, -0)) return unserializable('-0')
  return value
}

function encodeString(value: string, max: number): WireValue {
  if (value.length <= max) return value
  let end = max
  // Never cut a surrogate pair in half: the preview stays well-formed text.
  const last = value.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end -= 1
  return truncated(value.slice(0, end), value.length - end)
}

function encodeObject(value: object, depth: number, walk: Walk): WireValue {
  if (walk.ancestors.has(value)) return { __type: 'Circular' }
  const tag = Object.prototype.toString.call(value).slice(8, -1)

  // Leaves first: these never recurse, so depth and cycles do not matter.
  if (tag === 'Date') return encodeDate(value as Date)
  if (tag === 'RegExp') return String(value)
  if (tag === 'Number' || tag === 'String' || tag === 'Boolean' || tag === 'BigInt') {
    return encode((value as { valueOf(): unknown }).valueOf(), depth, walk)
  }
  if (tag === 'Symbol') return encode((value as { valueOf(): unknown }).valueOf(), depth, walk)
  if (OPAQUE_TAGS.has(tag)) return { __type: 'Opaque', name: tag }
  if (tag === 'ArrayBuffer' || tag === 'SharedArrayBuffer' || tag === 'DataView') {
    return { __type: 'Binary', name: tag, byteLength: (value as ArrayBuffer).byteLength }
  }

  if (depth >= walk.limits.maxDepth || walk.budget <= 0) {
    return truncated(describe(value, tag))
  }

  walk.ancestors.add(value)
  try {
    if (isError(value, tag)) return encodeError(value as Error, depth, walk)
    if (Array.isArray(value)) return encodeArray(value, depth, walk)
    if (ArrayBuffer.isView(value)) return encodeTypedArray(value, tag, depth, walk)
    if (tag === 'Map') return encodeMap(value as Map<unknown, unknown>, depth, walk)
    if (tag === 'Set') return encodeSet(value as Set<unknown>, depth, walk)
    const toJSON = (value as { toJSON?: unknown }).toJSON
    if (typeof toJSON === 'function') {
      return encode((toJSON as () => unknown).call(value), depth + 1, walk)
    }
    return encodeRecord(value, depth, walk)
  } finally {
    walk.ancestors.delete(value)
  }
}

function encodeDate(value: Date): WireValue {
  const time = value.getTime()
  return Number.isNaN(time) ? unserializable('Invalid Date') : value.toISOString()
}

function isError(value: object, tag: string): boolean {
  return tag === 'Error' || value instanceof Error
}

function encodeError(error: Error, depth: number, walk: Walk): WireValue {
  const out: Record<string, WireValue> = {
    __type: 'Error',
    name: readString(() => error.name, 'Error'),
    message: readString(() => error.message, ''),
  }
  if (walk.limits.stack) {
    const stack = readOwnOrInherited(error, 'stack')
    if (typeof stack === 'string') out.stack = encodeStringOrPreview(stack, walk)
  }
  if (Object.hasOwn(error, 'cause')) out.cause = encode(error.cause, depth + 1, walk)

  const fields: Record<string, WireValue> = {}
  let hasFields = false
  const keys = Object.keys(error).filter(
    (key) => key !== 'name' && key !== 'message' && key !== 'stack' && key !== 'cause',
  )
  // AggregateError keeps `errors` non-enumerable; it is the point of the error.
  if (Object.hasOwn(error, 'errors') && !keys.includes('errors')) keys.push('errors')
  for (const key of keys) {
    hasFields = true
    defineField(fields, key, encodeProperty(error, key, depth, walk))
  }
  if (hasFields) out.fields = fields
  return out
}

function encodeStringOrPreview(text: string, walk: Walk): string {
  const max = walk.limits.maxStringLength
  return text.length <= max ? text : text.slice(0, max)
}

function encodeArray(array: readonly unknown[], depth: number, walk: Walk): WireValue {
  const length = array.length
  const limit = Math.min(length, walk.limits.maxItems)
  const out: WireValue[] = []
  for (let index = 0; index < limit; index += 1) {
    if (walk.budget <= 0) break
    out.push(encodeProperty(array, index, depth, walk))
  }
  if (out.length < length)
    out.push(truncated(`${length - out.length} more items`, length - out.length))
  return out
}

function encodeTypedArray(
  view: ArrayBufferView,
  tag: string,
  depth: number,
  walk: Walk,
): WireValue {
  const items = view as unknown as ArrayLike<unknown>
  const length = items.length
  const limit = Math.min(length, walk.limits.maxItems)
  const values: WireValue[] = []
  for (let index = 0; index < limit; index += 1) {
    if (walk.budget <= 0) break
    values.push(encode(items[index], depth + 1, walk))
  }
  if (values.length < length) {
    values.push(truncated(`${length - values.length} more items`, length - values.length))
  }
  return { __type: 'Binary', name: tag, byteLength: view.byteLength, length, values }
}

function encodeMap(map: Map<unknown, unknown>, depth: number, walk: Walk): WireValue {
  const entries: (readonly [WireValue, WireValue])[] = []
  for (const [key, entry] of map) {
    if (entries.length >= walk.limits.maxItems || walk.budget <= 0) break
    entries.push([encode(key, depth + 1, walk), encode(entry, depth + 1, walk)])
  }
  return { __type: 'Map', size: map.size, entries }
}

function encodeSet(set: Set<unknown>, depth: number, walk: Walk): WireValue {
  const values: WireValue[] = []
  for (const entry of set) {
    if (values.length >= walk.limits.maxItems || walk.budget <= 0) break
    values.push(encode(entry, depth + 1, walk))
  }
  return { __type: 'Set', size: set.size, values }
}

function encodeRecord(record: object, depth: number, walk: Walk): WireValue {
  const keys = Object.keys(record)
  const limit = Math.min(keys.length, walk.limits.maxItems)
  const out: Record<string, WireValue> = {}
  let written = 0
  for (; written < limit; written += 1) {
    if (walk.budget <= 0) break
    const key = keys[written] as string
    defineField(out, key, encodeProperty(record, key, depth, walk))
  }
  if (written < keys.length) {
    defineField(out, '…', truncated(`${keys.length - written} more keys`, keys.length - written))
  }
  return out as WireObject
}

// One property read, isolated: a throwing getter spoils only its own field.
function encodeProperty(owner: object, key: string | number, depth: number, walk: Walk): WireValue {
  let value: unknown
  try {
    value = (owner as Record<string | number, unknown>)[key]
  } catch (error) {
    walk.budget -= 1
    return unreadable(error)
  }
  return encode(value, depth + 1, walk)
}

// `out[key] = …` with key '__proto__' would replace the prototype instead of
// adding a field, and JSON.parse creates an own '__proto__' property.
function defineField(out: Record<string, WireValue>, key: string, value: WireValue): void {
  if (key === '__proto__') {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
  } else {
    out[key] = value
  }
}

function describe(value: object, tag: string): string {
  try {
    if (Array.isArray(value)) return `Array(${value.length})`
    if (tag === 'Map' || tag === 'Set') return `${tag}(${(value as Set<unknown>).size})`
    if (isError(value, tag)) {
      return `${readString(() => (value as Error).name, 'Error')}: ${readString(() => (value as Error).message, '')}`.slice(
        0,
        200,
      )
    }
    const prototype = Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null
    const name = prototype?.constructor?.name
    return typeof name === 'string' && name !== '' ? name : 'Object'
  } catch {
    return 'Object'
  }
}

function readName(fn: Function): string {
  return readString(() => fn.name, '')
}

function readString(read: () => unknown, fallback: string): string {
  try {
    const value = read()
    if (typeof value === 'string') return value
    return value === undefined ? fallback : String(value)
  } catch {
    return fallback
  }
}

function readOwnOrInherited(owner: object, key: string): unknown {
  try {
    return (owner as Record<string, unknown>)[key]
  } catch {
    return undefined
  }
}

function unserializable(value: UnserializableKind): WireValue {
  return { __type: 'Unserializable', value }
}

function truncated(preview: string, omitted?: number): WireValue {
  const out: WireTruncated =
    omitted === undefined
      ? { __type: 'Truncated', preview }
      : { __type: 'Truncated', preview, omitted }
  return out
}

function unreadable(error: unknown): WireValue {
  let message: string
  try {
    message =
      typeof error === 'object' && error !== null && 'message' in error
        ? `${String((error as Error).name)}: ${String((error as Error).message)}`
        : String(error)
  } catch {
    message = 'unreadable'
  }
  return { __type: 'Unreadable', message: message.slice(0, 500) }
}
