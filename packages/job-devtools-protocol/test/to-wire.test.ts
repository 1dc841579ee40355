import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { toWire } from '../src/index.js'

const roundTrip = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

describe('toWire: primitives', () => {
  it('keeps JSON primitives as they are', () => {
    expect(toWire(null)).toBe(null)
    expect(toWire(true)).toBe(true)
    expect(toWire(0)).toBe(0)
    expect(toWire(-12.5)).toBe(-12.5)
    expect(toWire('text')).toBe('text')
  })

  it('names the numbers and undefined that JSON cannot carry', () => {
    expect(toWire(Number.NaN)).toEqual({ __type: 'Unserializable', value: 'NaN' })
    expect(toWire(Number.POSITIVE_INFINITY)).toEqual({
      __type: 'Unserializable',
      value: 'Infinity',
    })
    expect(toWire(Number.NEGATIVE_INFINITY)).toEqual({
      __type: 'Unserializable',
      value: '-Infinity',
    })
    expect(toWire(-0)).toEqual({ __type: 'Unserializable', value: '-0' })
    expect(toWire(undefined)).toEqual({ __type: 'Unserializable', value: 'undefined' })
  })

  it('encodes bigint, symbols and functions by value or name', () => {
    expect(toWire(2n ** 70n)).toEqual({ __type: 'BigInt', value: '1180591620717411303424' })
    expect(toWire(Symbol('token'))).toEqual({ __type: 'Symbol', description: 'token' })
    expect(toWire(Symbol())).toEqual({ __type: 'Symbol' })
    function fetchUser() {}
    expect(toWire(fetchUser)).toEqual({ __type: 'Function', name: 'fetchUser' })
    expect(toWire(() => 1)).toEqual({ __type: 'Function', name: '' })
  })

  it('unwraps boxed primitives', () => {
    expect(toWire(Object(3))).toBe(3)
    expect(toWire(Object('s'))).toBe('s')
    expect(toWire(Object(false))).toBe(false)
    expect(toWire(Object(5n))).toEqual({ __type: 'BigInt', value: '5' })
  })
})

describe('toWire: objects', () => {
  it('encodes undefined, -0 and NaN inside objects and arrays instead of dropping them', () => {
    expect(toWire({ a: undefined, b: [-0, Number.NaN] })).toEqual({
      a: { __type: 'Unserializable', value: 'undefined' },
      b: [
        { __type: 'Unserializable', value: '-0' },
        { __type: 'Unserializable', value: 'NaN' },
      ],
    })
  })

  it('encodes holes of sparse arrays as undefined', () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    expect(toWire([1, , 3])).toEqual([1, { __type: 'Unserializable', value: 'undefined' }, 3])
  })

  it('turns Dates into ISO strings, invalid ones into a tag', () => {
    expect(toWire(new Date(0))).toBe('1970-01-01T00:00:00.000Z')
    expect(toWire(new Date(Number.NaN))).toEqual({
      __type: 'Unserializable',
      value: 'Invalid Date',
    })
  })

  it('turns Maps and Sets into entry lists with their size', () => {
    const map = new Map<unknown, unknown>([
      ['a', 1],
      [{ k: 1 }, new Set([1n])],
    ])
    expect(toWire(map)).toEqual({
      __type: 'Map',
      size: 2,
      entries: [
        ['a', 1],
        [{ k: 1 }, { __type: 'Set', size: 1, values: [{ __type: 'BigInt', value: '1' }] }],
      ],
    })
  })

  it('encodes typed arrays and buffers as Binary', () => {
    expect(toWire(new Uint8Array([1, 2, 3]))).toEqual({
      __type: 'Binary',
      name: 'Uint8Array',
      byteLength: 3,
      length: 3,
      values: [1, 2, 3],
    })
    expect(toWire(new Float64Array([Number.NaN, -0]))).toEqual({
      __type: 'Binary',
      name: 'Float64Array',
      byteLength: 16,
      length: 2,
      values: [
        { __type: 'Unserializable', value: 'NaN' },
        { __type: 'Unserializable', value: '-0' },
      ],
    })
    expect(toWire(new BigInt64Array([7n]))).toMatchObject({
      values: [{ __type: 'BigInt', value: '7' }],
    })
    expect(toWire(new ArrayBuffer(8))).toEqual({
      __type: 'Binary',
      name: 'ArrayBuffer',
      byteLength: 8,
    })
    expect(toWire(new DataView(new ArrayBuffer(4)))).toEqual({
      __type: 'Binary',
      name: 'DataView',
      byteLength: 4,
    })
  })

  it('encodes null-prototype objects like plain ones', () => {
    const bare = Object.create(null) as Record<string, unknown>
    bare.x = 1
    bare.nested = Object.create(null)
    expect(toWire(bare)).toEqual({ x: 1, nested: {} })
  })

  it('keeps a "__proto__" key as a field, as JSON.parse would', () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}')
    const wire = toWire(value)
    expect(Object.getPrototypeOf(wire)).toBe(Object.prototype)
    expect(roundTrip(wire)).toStrictEqual(wire)
    expect(Object.keys(wire as object)).toEqual(['__proto__', 'ok'])
  })

  it('names objects that have no useful JSON form', () => {
    expect(toWire(Promise.resolve(1))).toEqual({ __type: 'Opaque', name: 'Promise' })
    expect(toWire(new WeakMap())).toEqual({ __type: 'Opaque', name: 'WeakMap' })
  })

  it('uses toJSON when an object has one, and stringifies RegExps', () => {
    expect(toWire(new URL('https://example.org/a'))).toBe('https://example.org/a')
    expect(toWire({ toJSON: () => ({ v: 1n }) })).toEqual({ v: { __type: 'BigInt', value: '1' } })
    expect(toWire(/a+/gi)).toBe('/a+/gi')
  })

  it('encodes own enumerable fields of class instances', () => {
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
      get length() {
        return Math.hypot(this.x, this.y)
      }
    }
    expect(toWire(new Point(3, 4))).toEqual({ x: 3, y: 4 })
  })
})

describe('toWire: errors', () => {
  it('keeps name, message, stack and a chain of causes', () => {
    const inner = new TypeError('inner')
    const outer = new Error('outer', { cause: inner })
    const wire = toWire(outer) as Record<string, unknown>
    expect(wire).toMatchObject({
      __type: 'Error',
      name: 'Error',
      message: 'outer',
      cause: { __type: 'Error', name: 'TypeError', message: 'inner' },
    })
    expect(typeof wire.stack).toBe('string')
    expect(toWire(outer, { stack: false })).toEqual({
      __type: 'Error',
      name: 'Error',
      message: 'outer',
      cause: { __type: 'Error', name: 'TypeError', message: 'inner' },
    })
  })

  it('marks a cycle through causes as Circular', () => {
    const a = new Error('a')
    const b = new Error('b', { cause: a })
    ;(a as { cause?: unknown }).cause = b
    expect(toWire(a, { stack: false })).toEqual({
      __type: 'Error',
      name: 'Error',
      message: 'a',
      cause: { __type: 'Error', name: 'Error', message: 'b', cause: { __type: 'Circular' } },
    })
  })

  it('keeps extra own fields of errors, and AggregateError.errors', () => {
    const error = Object.assign(new Error('cancelled'), { reason: 'abort', taskId: 3 })
    expect(toWire(error, { stack: false })).toEqual({
      __type: 'Error',
      name: 'Error',
      message: 'cancelled',
      fields: { reason: 'abort', taskId: 3 },
    })
    const aggregate = new AggregateError([new Error('one')], 'many')
    expect(toWire(aggregate, { stack: false })).toEqual({
      __type: 'Error',
      name: 'AggregateError',
      message: 'many',
      fields: { errors: [{ __type: 'Error', name: 'Error', message: 'one' }] },
    })
  })

  it('encodes an explicit undefined cause', () => {
    expect(toWire(new Error('x', { cause: undefined }), { stack: false })).toEqual({
      __type: 'Error',
      name: 'Error',
      message: 'x',
      cause: { __type: 'Unserializable', value: 'undefined' },
    })
  })
})

describe('toWire: hostile values never throw', () => {
  it('reports a throwing getter as Unreadable, field by field', () => {
    const value = {
      ok: 1,
      get bad(): never {
        throw new RangeError('nope')
      },
    }
    expect(toWire(value)).toEqual({
      ok: 1,
      bad: { __type: 'Unreadable', message: 'RangeError: nope' },
    })
  })

  it('survives a revoked proxy and a proxy whose traps throw', () => {
    const { proxy, revoke } = Proxy.revocable({}, {})
    revoke()
    expect(toWire(proxy)).toMatchObject({ __type: 'Unreadable' })
    const trap = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('ownKeys trap')
        },
      },
    )
    expect(toWire({ trap })).toEqual({
      trap: { __type: 'Unreadable', message: 'Error: ownKeys trap' },
    })
  })

  it('survives errors whose name and message are hostile', () => {
    const error = new Error('x')
    Object.defineProperty(error, 'message', {
      get() {
        throw new Error('no message')
      },
    })
    Object.defineProperty(error, 'name', { value: Symbol('weird') })
    expect(toWire(error, { stack: false })).toMatchObject({ __type: 'Error', message: '' })
  })

  it('rejects bad options early with a RangeError', () => {
    expect(() => toWire(1, { maxDepth: -1 })).toThrow(RangeError)
    expect(() => toWire(1, { maxItems: 1.5 })).toThrow(/maxItems/)
    expect(() => toWire(1, { maxStringLength: 0 })).toThrow(RangeError)
  })
})

describe('toWire: bounds', () => {
  it('cuts deep nesting with a Truncated preview', () => {
    const deep = { a: { b: { c: { d: [1, 2] } } } }
    expect(toWire(deep, { maxDepth: 3 })).toEqual({
      a: { b: { c: { __type: 'Truncated', preview: 'Object' } } },
    })
    expect(toWire({ a: [[1, 2, 3]] }, { maxDepth: 2 })).toEqual({
      a: [{ __type: 'Truncated', preview: 'Array(3)' }],
    })
  })

  it('cuts long arrays and objects, counting what was left out', () => {
    const long = Array.from({ length: 10 }, (_, i) => i)
    expect(toWire(long, { maxItems: 3 })).toEqual([
      0,
      1,
      2,
      { __type: 'Truncated', preview: '7 more items', omitted: 7 },
    ])
    const wide = Object.fromEntries(long.map((i) => [`k${i}`, i]))
    expect(toWire(wide, { maxItems: 2 })).toEqual({
      k0: 0,
      k1: 1,
      '…': { __type: 'Truncated', preview: '8 more keys', omitted: 8 },
    })
    expect(toWire(new Set(long), { maxItems: 2 })).toEqual({
      __type: 'Set',
      size: 10,
      values: [0, 1],
    })
  })

  it('cuts huge strings without splitting a surrogate pair', () => {
    expect(toWire('x'.repeat(50), { maxStringLength: 10 })).toEqual({
      __type: 'Truncated',
      preview: 'x'.repeat(10),
      omitted: 40,
    })
    const emoji = `abc${'😀'.repeat(5)}`
    const wire = toWire(emoji, { maxStringLength: 4 }) as { preview: string }
    expect(wire.preview).toBe('abc')
  })

  it('bounds the total size of shared, exponentially repeated structures', () => {
    let node: unknown = 'leaf'
    for (let i = 0; i < 40; i += 1) node = [node, node]
    const wire = toWire(node, { maxDepth: 100, maxNodes: 1_000 })
    expect(JSON.stringify(wire).length).toBeLessThan(100_000)
    expect(JSON.stringify(wire)).toContain('Truncated')
  })

  it('encodes shared (acyclic) references in full, not as Circular', () => {
    const shared = { id: 1 }
    expect(toWire({ a: shared, b: shared })).toEqual({ a: { id: 1 }, b: { id: 1 } })
  })
})

// Builds arbitrary values, then links random containers inside them to each
// other, so the input has cycles (and shared references) at any depth.
const withLinks = fc
  .tuple(
    fc.anything({
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withNullPrototype: true,
      withObjectString: true,
      withSet: true,
      withSparseArray: true,
      withTypedArray: true,
      withUnicodeString: true,
    }),
    fc.array(fc.tuple(fc.nat(), fc.nat(), fc.string({ maxLength: 3 })), { maxLength: 4 }),
    fc.constantFrom(undefined, new Error('boom'), () => 1, Symbol('s'), -0, Number.NaN),
  )
  .map(([base, links, extra]) => {
    const root = { base, extra, error: new Error('root', { cause: base }) }
    const containers: object[] = []
    const seen = new Set<unknown>()
    const collect = (value: unknown): void => {
      if (typeof value !== 'object' || value === null || seen.has(value)) return
      seen.add(value)
      if (ArrayBuffer.isView(value)) return
      containers.push(value)
      if (value instanceof Map) {
        for (const [k, v] of value) {
          collect(k)
          collect(v)
        }
      } else if (value instanceof Set) {
        for (const v of value) collect(v)
      } else {
        for (const key of Object.keys(value)) collect((value as Record<string, unknown>)[key])
      }
    }
    collect(root)
    for (const [from, to, key] of links) {
      const source = containers[from % containers.length]
      const target = containers[to % containers.length]
      if (source instanceof Map) source.set(key, target)
      else if (source instanceof Set) source.add(target)
      else if (source !== undefined) Reflect.set(source, `link${key}`, target)
    }
    return root
  })

describe('toWire: properties', () => {
  it('never throws, and its output survives a JSON round trip unchanged (cycles included)', () => {
    fc.assert(
      fc.property(withLinks, (value) => {
        const wire = toWire(value)
        expect(roundTrip(wire)).toStrictEqual(wire)
      }),
      { numRuns: 300 },
    )
  })

  it('is deterministic and respects tight limits for any value', () => {
    fc.assert(
      fc.property(
        withLinks,
        fc.record({
          maxDepth: fc.integer({ min: 0, max: 4 }),
          maxItems: fc.integer({ min: 0, max: 4 }),
          maxStringLength: fc.integer({ min: 1, max: 8 }),
          maxNodes: fc.integer({ min: 1, max: 50 }),
        }),
        (value, limits) => {
          const wire = toWire(value, { ...limits, stack: false })
          expect(toWire(value, { ...limits, stack: false })).toStrictEqual(wire)
          expect(roundTrip(wire)).toStrictEqual(wire)
        },
      ),
      { numRuns: 200 },
    )
  })
})
