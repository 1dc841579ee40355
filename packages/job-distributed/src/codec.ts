/**
 * How a dedupe leader's value travels to callers in other processes. `encode`
 * must throw for a value it cannot represent (those callers then fail with a
 * clear `RemoteTaskError`); `decode(encode(v))` must give back an equal value.
 *
 * @example
 * ```ts
 * const dateCodec: Codec = {
 *   encode: (value) => JSON.stringify(value),
 *   decode: (text) => JSON.parse(text, (k, v) => (k === 'at' ? new Date(v) : v)),
 * }
 * ```
 */
export interface Codec {
  encode(value: unknown): string
  decode(text: string): unknown
}

/**
 * The default codec: JSON, strict. `undefined` travels as itself; a value JSON
 * would silently drop or mangle (a function, a symbol, a `BigInt`, a cycle)
 * throws a `TypeError` instead of reaching the other processes as something else.
 *
 * @example
 * ```ts
 * jsonCodec.decode(jsonCodec.encode({ id: 42 })) // { id: 42 }
 * jsonCodec.encode(() => 1) // throws TypeError
 * ```
 */
export const jsonCodec: Codec = Object.freeze({
  encode(value: unknown): string {
    if (value === undefined) return ''
    const text = JSON.stringify(value, (_key, inner: unknown) => {
      if (typeof inner === 'function' || typeof inner === 'symbol') {
        throw new TypeError(`jsonCodec.encode: a ${typeof inner} cannot travel as JSON.`)
      }
      return inner
    })
    if (text === undefined) {
      throw new TypeError(`jsonCodec.encode: ${typeof value} cannot travel as JSON.`)
    }
    return text
  },
  decode(text: string): unknown {
    return text === '' ? undefined : JSON.parse(text)
  },
})
