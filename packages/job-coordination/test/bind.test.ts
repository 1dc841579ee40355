import * as core from '@vega/job-core'
import { createRuntime, type Key, PluginMissingError, run, settle } from '@vega/job-core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  type Coordinator,
  createSerializeCoordinator,
  dedupeCoordinator,
  defineCoordinator,
  hashKey,
  installCoordination,
  isCoordinator,
  withCoordinator,
} from '../src/index.js'
import { harness } from './support.js'

const work = async (): Promise<number> => 1

describe('withCoordinator checks at bind time', () => {
  it('rejects a missing key with a TypeError that says what to pass', () => {
    expect(() => withCoordinator(work, dedupeCoordinator, {} as { key: Key })).toThrow(TypeError)
    expect(() =>
      withCoordinator(work, dedupeCoordinator, { key: undefined } as unknown as { key: Key }),
    ).toThrow(/a key is required/)
    expect(() =>
      withCoordinator(work, dedupeCoordinator, undefined as unknown as { key: Key }),
    ).toThrow(TypeError)
  })

  it.each([
    ['a function', () => 1, /function/],
    ['a symbol', Symbol('s'), /symbol/],
    ['a class instance', new Map(), /instance of Map/],
    ['a nested undefined', { a: undefined }, /undefined/],
    ['a bigint', 1n, /bigint/],
  ])('rejects an unhashable key (%s)', (_what, key, message) => {
    expect(() => withCoordinator(work, dedupeCoordinator, { key: key as unknown as Key })).toThrow(
      TypeError,
    )
    expect(() => withCoordinator(work, dedupeCoordinator, { key: key as unknown as Key })).toThrow(
      message,
    )
  })

  it('rejects a key with a cycle', () => {
    const cyclic: Record<string, unknown> = { id: 1 }
    cyclic.self = cyclic
    expect(() => withCoordinator(work, dedupeCoordinator, { key: cyclic as Key })).toThrow(
      /withCoordinator.*cycle/,
    )
  })

  it('rejects a taskFn that is not a function', () => {
    expect(() =>
      withCoordinator('fetch' as unknown as () => number, dedupeCoordinator, { key: 'k' }),
    ).toThrow(/taskFn must be a function/)
  })

  it('rejects a value that is not a coordinator, and takes a stateful one as is', () => {
    const fake = { name: 'fake', coordinate: () => undefined } as Coordinator
    expect(() => withCoordinator(work, fake, { key: 'k' })).toThrow(/defineCoordinator/)
    const serialize = createSerializeCoordinator()
    expect(typeof withCoordinator(work, serialize, { key: 'k' })).toBe('function')
    expect(() =>
      withCoordinator(work, { dispose() {} } as unknown as Coordinator, { key: 'k' }),
    ).toThrow(/expected a coordinator/)
    expect(() => withCoordinator(work, undefined as unknown as Coordinator, { key: 'k' })).toThrow(
      TypeError,
    )
  })

  it('returns a new taskFn and leaves the original untouched', async () => {
    const bound = withCoordinator(work, dedupeCoordinator, { key: 'k' })
    expect(bound).not.toBe(work)
    expect(await run(createRuntime(), work)).toBe(1)
  })
})

describe('defineCoordinator', () => {
  it('rejects an empty name and a non-function impl', () => {
    expect(() => defineCoordinator('', (ctx) => ctx.proceed())).toThrow(TypeError)
    expect(() => defineCoordinator('   ', (ctx) => ctx.proceed())).toThrow(/non-empty/)
    expect(() =>
      defineCoordinator('x', 'proceed' as unknown as Parameters<typeof defineCoordinator>[1]),
    ).toThrow(/impl must be a function/)
  })

  it('returns a frozen, recognisable coordinator', () => {
    const mine = defineCoordinator('mine', (ctx) => ctx.proceed())
    expect(mine.name).toBe('mine')
    expect(Object.isFrozen(mine)).toBe(true)
    expect(isCoordinator(mine)).toBe(true)
    expect(isCoordinator({ name: 'mine', coordinate: mine.coordinate })).toBe(false)
  })
})

describe('hashKey', () => {
  it('is core’s hashKey, re-exported', () => {
    expect(hashKey).toBe(core.hashKey)
  })

  it('ignores object key order; distinguishes types', () => {
    expect(hashKey({ a: 1, b: 2 })).toBe(hashKey({ b: 2, a: 1 }))
    expect(hashKey(['doc', { id: 1, tab: 'x' }])).toBe(hashKey(['doc', { tab: 'x', id: 1 }]))
    expect(hashKey('1')).not.toBe(hashKey(1))
    expect(hashKey(null)).not.toBe(hashKey('null'))
  })

  it('makes calls with reordered object keys peers', async () => {
    const { runtime } = harness()
    const first = run(runtime, withCoordinator(work, dedupeCoordinator, { key: { a: 1, b: 2 } }))
    const second = run(runtime, withCoordinator(work, dedupeCoordinator, { key: { b: 2, a: 1 } }))
    expect(second.cancelReason).toBe('dedupe')
    expect(await second).toBe(await first)
  })

  it('shows the hash as the task key in task:created', () => {
    const { runtime, events } = harness()
    run(runtime, withCoordinator(work, dedupeCoordinator, { key: ['user', 7] }))
    expect(events.find((e) => e.type === 'task:created')).toMatchObject({ key: '["user",7]' })
  })
})

// A key of a few strings, numbers, booleans or nulls is found among the
// bindings kept by walking its items instead of hashing it
// (`src/internal/coordination-tag.ts`): two keys must meet there exactly
// when their hashes are equal, and such a key, once bound, is not hashed
// again.
describe('keys found by their items', () => {
  const item = fc.constantFrom<unknown>(
    'k',
    '1',
    1,
    0,
    -0,
    Number.NaN,
    Infinity,
    true,
    'true',
    null,
    'null',
    '',
  )
  const key = fc.oneof(item, fc.array(item, { maxLength: 6 }), fc.constant([['k'], 1]))

  it('calls bound per call are peers exactly when their keys hash the same, and carry that hash', () => {
    fc.assert(
      fc.property(fc.array(key, { minLength: 1, maxLength: 30 }), (keys) => {
        const { runtime, events } = harness()
        const pending = new Promise<never>(() => {})
        const firstByHash = new Map<string, number>()
        keys.forEach((k, i) => {
          const task = run(
            runtime,
            withCoordinator(() => pending, dedupeCoordinator, { key: k as Key }),
          )
          const hash = hashKey(k)
          const created = events.filter((e) => e.type === 'task:created').at(-1)
          expect(created).toMatchObject({ key: hash })
          const first = firstByHash.get(hash)
          if (first === undefined) {
            firstByHash.set(hash, i)
            expect(task.cancelReason).toBeUndefined()
          } else expect(task.cancelReason).toBe('dedupe')
        })
      }),
    )
  })

  it('a key bound twice before is found by reading each of its items once, not hashed again', () => {
    const coordinator = createSerializeCoordinator()
    const reads: PropertyKey[] = []
    const counted = (items: Key[]): Key[] =>
      new Proxy(items, {
        get(target, property, receiver) {
          reads.push(property)
          return Reflect.get(target, property, receiver)
        },
      })
    // The first call makes the binding, the second lets the key be walked to.
    withCoordinator(work, coordinator, { key: counted(['doc', 7]) })
    withCoordinator(work, coordinator, { key: counted(['doc', 7]) })
    reads.length = 0
    withCoordinator(work, coordinator, { key: counted(['doc', 7]) })
    // Hashing would read them again (and more: a walk that misses, then the hash).
    expect(reads).toEqual(['length', '0', '1'])
  })
})

describe('without the plugin', () => {
  it('ends a coordinated call in error with a PluginMissingError naming installCoordination; the body never runs', async () => {
    const runtime = createRuntime()
    let ran = false
    const task = run(
      runtime,
      withCoordinator(
        async () => {
          ran = true
        },
        dedupeCoordinator,
        { key: 'k' },
      ),
    )
    const outcome = await settle(task)
    expect(outcome.status).toBe('error')
    const error = (outcome as { error: unknown }).error
    expect(error).toBeInstanceOf(PluginMissingError)
    expect((error as PluginMissingError).plugin).toBe('installCoordination')
    expect((error as Error).message).toMatch(/plugins: \[installCoordination\]/)
    expect(ran).toBe(false)
    expect(installCoordination.name).toBe('installCoordination')
  })
})
