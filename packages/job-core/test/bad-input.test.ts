import { describe, expect, it } from 'vitest'
import {
  createRuntime,
  createTaskTag,
  debounce,
  getEventBus,
  hashKey,
  run,
  shutdown,
  subscribe,
  throttle,
  withShaper,
} from '../src/index.js'

describe('bad input gets a clear, early error', () => {
  it('concurrency 0, negative, NaN or fractional → RangeError at creation', () => {
    for (const concurrency of [0, -1, Number.NaN, 1.5]) {
      expect(() => createRuntime({ concurrency })).toThrow(RangeError)
    }
    expect(() => createRuntime({ concurrency: 0 })).toThrow(/positive integer or Infinity/)
    expect(() => createRuntime({ concurrency: Number.POSITIVE_INFINITY })).not.toThrow()
  })

  it('a non-function taskFn → TypeError at run()', () => {
    const runtime = createRuntime()
    expect(() => run(runtime, 42 as never)).toThrow(TypeError)
    expect(() => run(runtime, undefined as never)).toThrow(/taskFn must be a function/)
  })

  it('something that is not a runtime → TypeError naming the call', () => {
    expect(() => run({} as never, () => 1)).toThrow(/run\(runtime, taskFn\): expected a runtime/)
    expect(() => subscribe(null as never, () => {})).toThrow(TypeError)
    expect(() => getEventBus(undefined as never)).toThrow(TypeError)
  })

  it('malformed run options → TypeError or RangeError', () => {
    const runtime = createRuntime()
    expect(() => run(runtime, () => 1, { priority: Number.NaN })).toThrow(TypeError)
    expect(() => run(runtime, () => 1, { label: 3 as never })).toThrow(TypeError)
    expect(() => run(runtime, () => 1, { signal: {} as never })).toThrow(TypeError)
    expect(() => run(runtime, () => 1, { timeout: -1 })).toThrow(RangeError)
    expect(() => run(runtime, () => 1, { retry: 0 })).toThrow(RangeError)
    expect(() => run(runtime, () => 1, { dependsOn: [Promise.resolve()] as never })).toThrow(
      /dependsOn\[0\] is not a task/,
    )
  })

  it('createRuntime refuses concurrency with a custom backend, non-plugins and bad listeners', () => {
    const runtime = createRuntime()
    expect(() => createRuntime({ concurrency: 2, backend: {} as never })).toThrow(/not both/)
    expect(() => createRuntime({ plugins: [{} as never] })).toThrow(/not a plugin/)
    expect(() => subscribe(runtime, 'x' as never)).toThrow(TypeError)
    expect(() => createTaskTag('')).toThrow(TypeError)
    expect(() => shutdown(runtime, { deadline: -5 })).toThrow(RangeError)
  })

  it('shapers refuse bad windows and missing keys at bind time', () => {
    expect(() => debounce(-1)).toThrow(RangeError)
    expect(() => throttle(Number.NaN)).toThrow(RangeError)
    expect(() => debounce(10, { leading: false, trailing: false })).toThrow(RangeError)
    expect(() => debounce(10, { maxWait: 5 })).toThrow(/maxWait/)
    expect(() => withShaper(() => 1, debounce(10), {} as never)).toThrow(/a key is required/)
    expect(() => withShaper(() => 1, debounce(10), { kye: 'search' } as never)).toThrow(
      /unknown option 'kye'.*did you mean 'key'/,
    )
    expect(() => withShaper(() => 1, debounce(10), { key: { f: () => 1 } as never })).toThrow(
      TypeError,
    )
  })

  it('hashKey: order-independent objects, distinct types, unhashables refused', () => {
    expect(hashKey({ a: 1, b: [2, 'x'] })).toBe(hashKey({ b: [2, 'x'], a: 1 }))
    expect(hashKey('1')).not.toBe(hashKey(1))
    expect(hashKey(Number.NaN)).not.toBe(hashKey(null))
    expect(hashKey(-0)).toBe(hashKey(0))
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    for (const bad of [undefined, () => 1, Symbol('s'), 1n, new Date(), cycle, { u: undefined }]) {
      expect(() => hashKey(bad)).toThrow(TypeError)
    }
  })

  it('hashKey: the exact strings (Redis keys are made of them), and where an unhashable part sits', () => {
    expect(hashKey(['item', 7, -0, true, null])).toBe('["item",7,0,true,null]')
    expect(hashKey({ b: 'q"\n', a: [Number.NaN, Number.POSITIVE_INFINITY, 1.5] })).toBe(
      '{"a":[#NaN,#Infinity,1.5],"b":"q\\"\\n"}',
    )
    expect(hashKey('\ud800')).toBe('"\\ud800"')
    expect(hashKey('😀é')).toBe('"😀é"')
    const shared = { z: 1 }
    expect(hashKey([shared, shared])).toBe('[{"z":1},{"z":1}]')
    expect(() => hashKey(['a', [1, { x: undefined }]])).toThrow(
      /^Unhashable key\[1\]\[1\]\.x: it contains undefined\./,
    )
    const ring: unknown[] = [1]
    ring.push({ back: [ring] })
    expect(() => hashKey(ring)).toThrow(/^Unhashable key\[1\]\.back\[0\]: it contains a cycle\./)
    expect(() => hashKey({ at: new Date(0) })).toThrow(
      /^Unhashable key\.at: it contains an instance of Date\./,
    )
  })
})
