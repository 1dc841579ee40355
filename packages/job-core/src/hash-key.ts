/**
 * What counts as a key: strings, numbers, booleans, `null`, and arrays and
 * plain objects of those.
 *
 * @example
 * ```ts
 * const key: Key = ['doc', 42, { draft: true }]
 * ```
 */
export type Key =
  | string
  | number
  | boolean
  | null
  | readonly Key[]
  | { readonly [field: string]: Key }

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
  return encode(key, [], 'key')
}

function encode(value: unknown, path: object[], where: string): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value)
    case 'number':
      // JSON would turn NaN and ±Infinity into null; -0 and 0 are one key, as in a Map.
      return Number.isFinite(value) ? String(value === 0 ? 0 : value) : `#${value}`
    case 'boolean':
      return value ? 'true' : 'false'
    case 'object': {
      if (value === null) return 'null'
      if (path.includes(value)) throw unhashable(where, 'a cycle')
      path.push(value)
      try {
        if (Array.isArray(value)) {
          return `[${value.map((item, i) => encode(item, path, `${where}[${i}]`)).join(',')}]`
        }
        const proto = Object.getPrototypeOf(value)
        if (proto !== Object.prototype && proto !== null) {
          throw unhashable(where, `an instance of ${proto?.constructor?.name ?? 'a class'}`)
        }
        const fields = Object.keys(value).sort()
        const parts = fields.map(
          (field) =>
            `${JSON.stringify(field)}:${encode((value as Record<string, unknown>)[field], path, `${where}.${field}`)}`,
        )
        return `{${parts.join(',')}}`
      } finally {
        path.pop()
      }
    }
    default:
      throw unhashable(where, value === undefined ? 'undefined' : `a ${typeof value}`)
  }
}

function unhashable(where: string, what: string): TypeError {
  return new TypeError(
    `Unhashable ${where}: it contains ${what}. Keys are strings, numbers, booleans, null, ` +
      'and arrays or plain objects of those; pass an id (e.g. user.id) instead of an object with behaviour.',
  )
}
