/**
 * A stable string for a key: equal keys get equal hashes, and object field
 * order does not matter (`{a:1,b:2}` and `{b:2,a:1}` hash the same). Strings
 * and numbers never collide (`'1'` ≠ `1`). Throws `TypeError` for what cannot
 * be a key: `undefined`, functions, symbols, bigints, class instances, cycles.
 *
 * @example
 * ```ts
 * hashKey(['user', { id: 1, tab: 'a' }]) === hashKey(['user', { tab: 'a', id: 1 }]) // true
 * ```
 */
export function hashKey(key: unknown): string {
  try {
    return encode(key, undefined)
  } catch (error) {
    if (!(error instanceof Unhashable)) throw error
    throw new TypeError(
      `Unhashable key${error.where.reverse().join('')}: it contains ${error.what}. Keys are strings, numbers, booleans, null, ` +
        'and arrays or plain objects of those; pass an id (e.g. user.id) instead of an object with behaviour.',
    )
  }
}

// Hashing runs once per bound call (withCoordinator, withShaper), so the
// common case builds nothing but its result: no path strings (the error's
// "where" is put together on the way out of a failure), and a frame of the
// cycle check only when an object holds another object.

/** The containers above the value being encoded, innermost first. */
interface Frame {
  readonly value: object
  readonly up: Frame | undefined
}

/** A failure on its way out: each container it passes adds its step to `where`. */
class Unhashable {
  readonly where: string[] = []
  constructor(readonly what: string) {}
}

/** Characters JSON.stringify would escape (lone surrogates too): strings without them need no escaping. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what JSON escapes.
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/
function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`
}

function encode(value: unknown, above: Frame | undefined): string {
  switch (typeof value) {
    case 'string':
      return quote(value)
    case 'number':
      // JSON would turn NaN and ±Infinity into null; -0 and 0 are one key, as in a Map.
      return Number.isFinite(value) ? String(value === 0 ? 0 : value) : `#${value}`
    case 'boolean':
      return value ? 'true' : 'false'
    case 'object': {
      if (value === null) return 'null'
      for (let frame = above; frame !== undefined; frame = frame.up) {
        if (frame.value === value) throw new Unhashable('a cycle')
      }
      return Array.isArray(value) ? encodeArray(value, above) : encodeObject(value, above)
    }
    default:
      throw new Unhashable(value === undefined ? 'undefined' : `a ${typeof value}`)
  }
}

function encodeArray(items: readonly unknown[], above: Frame | undefined): string {
  let frame: Frame | undefined
  let out = '['
  for (let i = 0; i < items.length; i++) {
    const item = items[i]
    if (i > 0) out += ','
    try {
      out += encode(
        item,
        item !== null && typeof item === 'object'
          ? (frame ??= { value: items, up: above })
          : undefined,
      )
    } catch (error) {
      if (error instanceof Unhashable) error.where.push(`[${i}]`)
      throw error
    }
  }
  return `${out}]`
}

function encodeObject(value: object, above: Frame | undefined): string {
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) {
    throw new Unhashable(`an instance of ${proto?.constructor?.name ?? 'a class'}`)
  }
  const fields = Object.keys(value).sort()
  let frame: Frame | undefined
  let out = '{'
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!
    const item = (value as Record<string, unknown>)[field]
    if (i > 0) out += ','
    try {
      out += `${quote(field)}:${encode(item, item !== null && typeof item === 'object' ? (frame ??= { value, up: above }) : undefined)}`
    } catch (error) {
      if (error instanceof Unhashable) error.where.push(`.${field}`)
      throw error
    }
  }
  return `${out}}`
}
