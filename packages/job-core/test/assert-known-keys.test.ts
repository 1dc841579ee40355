import { describe, expect, it } from 'vitest'
import { assertKnownKeys } from '../src/index.js'
import { closestKey, editDistance } from '../src/internal/closest-key.js'

const RUN_OPTIONS = ['label', 'signal', 'dependsOn', 'priority', 'timeout', 'retry'] as const

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions and neighbour swaps as one edit each', () => {
    expect(editDistance('label', 'label')).toBe(0)
    expect(editDistance('', 'abc')).toBe(3)
    expect(editDistance('abc', '')).toBe(3)
    expect(editDistance('timout', 'timeout')).toBe(1) // insertion
    expect(editDistance('concurrencyy', 'concurrency')).toBe(1) // deletion
    expect(editDistance('prioritx', 'priority')).toBe(1) // substitution
    expect(editDistance('lable', 'label')).toBe(1) // swap
    expect(editDistance('kitten', 'sitting')).toBe(3)
  })

  it('is symmetric', () => {
    for (const [a, b] of [
      ['lable', 'label'],
      ['kitten', 'sitting'],
      ['dependOn', 'dependsOn'],
      ['', 'x'],
    ] as const) {
      expect(editDistance(a, b)).toBe(editDistance(b, a))
    }
  })
})

describe('closestKey', () => {
  it('suggests the known key a typo came from', () => {
    expect(closestKey('lable', RUN_OPTIONS)).toBe('label')
    expect(closestKey('timout', RUN_OPTIONS)).toBe('timeout')
    expect(closestKey('retyr', RUN_OPTIONS)).toBe('retry')
    expect(closestKey('dependOn', RUN_OPTIONS)).toBe('dependsOn')
    expect(closestKey('concurency', ['name', 'concurrency', 'backend'])).toBe('concurrency')
  })

  it('ignores case', () => {
    expect(closestKey('Label', RUN_OPTIONS)).toBe('label')
    expect(closestKey('DEPENDSON', RUN_OPTIONS)).toBe('dependsOn')
  })

  it('suggests nothing for a name that is not a plausible typo', () => {
    expect(closestKey('onError', RUN_OPTIONS)).toBeUndefined()
    expect(closestKey('x', RUN_OPTIONS)).toBeUndefined()
    expect(closestKey('anything', [])).toBeUndefined()
  })
})

describe('assertKnownKeys', () => {
  const where = 'run(runtime, taskFn, options)'

  it('accepts known keys, explicit undefined values and an empty object', () => {
    expect(() => assertKnownKeys(where, {}, RUN_OPTIONS)).not.toThrow()
    expect(() =>
      assertKnownKeys(where, { label: 'a', signal: undefined, retry: 3 }, RUN_OPTIONS),
    ).not.toThrow()
  })

  it('names the unknown key, suggests the closest known one and lists them all', () => {
    expect(() => assertKnownKeys(where, { lable: 'x' }, RUN_OPTIONS)).toThrow(
      new TypeError(
        "run(runtime, taskFn, options): unknown option 'lable'; did you mean 'label'? " +
          "Known options: 'label', 'signal', 'dependsOn', 'priority', 'timeout', 'retry'.",
      ),
    )
  })

  it('says what to do when no known key is close', () => {
    expect(() =>
      assertKnownKeys('shutdown(runtime, options)', { force: true }, ['mode', 'deadline']),
    ).toThrow(
      new TypeError(
        "shutdown(runtime, options): unknown option 'force'. Known options: 'mode', 'deadline'. " +
          'Remove it or check its spelling.',
      ),
    )
  })

  it('catches a misspelled key even when its value is undefined', () => {
    expect(() => assertKnownKeys(where, { timout: undefined }, RUN_OPTIONS)).toThrow(
      /unknown option 'timout'; did you mean 'timeout'\?/,
    )
  })

  it('reports the first unknown key in the order the object lists them', () => {
    expect(() => assertKnownKeys(where, { label: 'a', prio: 1, lable: 'b' }, RUN_OPTIONS)).toThrow(
      /unknown option 'prio'/,
    )
  })

  it('checks own keys only: inherited ones are not the caller’s options', () => {
    const inherited = Object.create({ lable: 'from the prototype' }) as object
    expect(() => assertKnownKeys(where, inherited, RUN_OPTIONS)).not.toThrow()
  })

  it('quotes keys so that odd characters stay readable', () => {
    expect(() => assertKnownKeys(where, { "it's": 1 }, RUN_OPTIONS)).toThrow(
      /unknown option 'it\\'s'\. Known options/,
    )
  })

  it('rejects options that are not an object, echoing the value', () => {
    expect(() => assertKnownKeys(where, null as never, RUN_OPTIONS)).toThrow(
      new TypeError(`${where}: options must be an object, got null. Pass { … } or leave it out.`),
    )
    expect(() => assertKnownKeys(where, 'fast' as never, RUN_OPTIONS)).toThrow(
      /options must be an object, got 'fast'\./,
    )
    expect(() => assertKnownKeys(where, 3 as never, RUN_OPTIONS)).toThrow(
      /options must be an object, got 3\./,
    )
  })

  it('says "none" when nothing is known', () => {
    expect(() => assertKnownKeys('f(options)', { a: 1 }, [])).toThrow(
      "f(options): unknown option 'a'. Known options: none. Remove it or check its spelling.",
    )
  })
})
