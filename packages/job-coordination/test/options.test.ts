import type { Key } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import {
  CoordinationProtocolError,
  createKeepLatestCoordinator,
  createSerializeCoordinator,
  dedupeCoordinator,
  defineCoordinator,
  isCoordinationProtocolError,
  isCoordinator,
  restartCoordinator,
  withCoordinator,
} from '../src/index.js'

const work = async () => 1

describe('withCoordinator(taskFn, coordinator, binding)', () => {
  it('rejects a misspelled binding field, naming the coordinator and the closest field', () => {
    expect(() =>
      withCoordinator(work, dedupeCoordinator, { kye: ['doc', 1], key: 'k' } as unknown as {
        key: Key
      }),
    ).toThrow(
      new TypeError(
        "withCoordinator(taskFn, dedupe, binding): unknown option 'kye'; did you mean 'key'? Known options: 'key'.",
      ),
    )
  })

  it('suggests key for a misspelt key alone, rather than saying the key is missing', () => {
    expect(() =>
      withCoordinator(work, dedupeCoordinator, { kye: ['doc', 1] } as unknown as { key: Key }),
    ).toThrow(
      new TypeError(
        "withCoordinator(taskFn, dedupe, binding): unknown option 'kye'; did you mean 'key'? Known options: 'key'.",
      ),
    )
    expect(() => withCoordinator(work, dedupeCoordinator, {} as { key: Key })).toThrow(
      /a key is required/,
    )
  })

  it('echoes what it got instead of a coordinator or a taskFn', () => {
    expect(() => withCoordinator('load' as never, restartCoordinator, { key: 'k' })).toThrow(
      /taskFn must be a function \(ctx\) => …, got 'load'\./,
    )
    expect(() => withCoordinator(work, 'dedupe' as never, { key: 'k' })).toThrow(
      /expected a coordinator, got 'dedupe'\./,
    )
    expect(() => withCoordinator(work, [] as never, { key: 'k' })).toThrow(
      /expected a coordinator, got an array\./,
    )
  })
})

describe('createSerializeCoordinator(options)', () => {
  it('rejects a misspelled option with a suggestion', () => {
    expect(() => createSerializeCoordinator({ concurency: 2 } as never)).toThrow(
      new TypeError(
        "createSerializeCoordinator(options): unknown option 'concurency'; did you mean 'concurrency'? Known options: 'concurrency', 'name'.",
      ),
    )
  })

  it('quotes a string where a number belongs, and echoes a bad number', () => {
    expect(() => createSerializeCoordinator({ concurrency: '3' as never })).toThrow(
      new TypeError(
        "createSerializeCoordinator({ concurrency }): concurrency must be a number, got '3'.",
      ),
    )
    expect(() => createSerializeCoordinator({ concurrency: -1 })).toThrow(
      /concurrency must be an integer ≥ 1 \(or Infinity\), got -1\./,
    )
  })

  it('blames itself, not defineCoordinator, for a bad name', () => {
    expect(() => createSerializeCoordinator({ name: 42 as never })).toThrow(
      new TypeError(
        "createSerializeCoordinator({ name }): name must be a non-empty string, got 42. Leave it out for 'serialize'.",
      ),
    )
    expect(() => createSerializeCoordinator({ name: ' ' })).toThrow(/got ' '\./)
  })

  it('accepts explicit undefined for its defaults', () => {
    const { coordinator } = createSerializeCoordinator({ concurrency: undefined, name: undefined })
    expect(coordinator.name).toBe('serialize')
  })

  it('rejects options that are not an object, echoing them', () => {
    expect(() => createSerializeCoordinator(2 as never)).toThrow(/got 2\./)
  })
})

describe('defineCoordinator(name, impl)', () => {
  it('echoes a bad name and a bad impl', () => {
    expect(() => defineCoordinator(7 as never, (ctx) => ctx.proceed())).toThrow(
      /name must be a non-empty string, got 7;/,
    )
    expect(() => defineCoordinator('x', 'proceed' as never)).toThrow(
      /impl must be a function .*, got 'proceed'\./,
    )
  })
})

describe('one shape for every create*Coordinator', () => {
  it('serialize and keepLatest return the coordinator itself, with its lifecycle', () => {
    for (const made of [createSerializeCoordinator(), createKeepLatestCoordinator()]) {
      expect(isCoordinator(made)).toBe(true)
      expect(typeof made.dispose).toBe('function')
      expect(typeof made.resetAdmission).toBe('function')
      // The former handle's field, deprecated: the coordinator itself.
      expect(made.coordinator).toBe(made)
      expect(Object.isFrozen(made)).toBe(true)
    }
  })
})

describe('isCoordinationProtocolError', () => {
  it('recognises the error a second decision throws, and nothing else', () => {
    const error = new CoordinationProtocolError('twice', 'c', 1)
    expect(isCoordinationProtocolError(error)).toBe(true)
    expect(isCoordinationProtocolError(new Error('twice'))).toBe(false)
    expect(isCoordinationProtocolError({ name: 'CoordinationProtocolError' })).toBe(false)
  })
})
