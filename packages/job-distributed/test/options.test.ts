import { describe, expect, it } from 'vitest'
import {
  checkCodec,
  describeValue,
  jsonCodec,
  resolveBusOptions,
  resolveCoordinationOptions,
} from '../src/index.js'

describe('checkCodec', () => {
  it('gives jsonCodec for undefined and the codec passed when it has encode and decode', () => {
    const codec = { encode: (v: unknown) => String(v), decode: (t: string) => t }
    expect(checkCodec('f(options)', undefined)).toBe(jsonCodec)
    expect(checkCodec('f(options)', codec)).toBe(codec)
  })

  it('refuses anything else with a TypeError naming the option and the value', () => {
    expect(() => checkCodec('f(options)', { encode: () => '' })).toThrow(
      new TypeError(
        'f(options): codec must be { encode(value): string, decode(text): unknown }, got an object (Object).',
      ),
    )
    expect(() => checkCodec('f(options)', 'json')).toThrow(/got 'json'\.$/)
    expect(() => checkCodec('f(options)', () => '')).toThrow(/got a function\.$/)
  })

  it('is the one check behind both the coordination options and the bus options', () => {
    expect(() => resolveCoordinationOptions('createX', { leaseMs: 1000, codec: 5 })).toThrow(
      'createX(options): codec must be { encode(value): string, decode(text): unknown }, got 5.',
    )
    expect(() =>
      resolveBusOptions('createBus(options)', { partitions: 4, leaseMs: 1000, codec: 5 }),
    ).toThrow(
      'createBus(options): codec must be { encode(value): string, decode(text): unknown }, got 5.',
    )
  })
})

describe('describeValue', () => {
  it('names a value as an option error shows it', () => {
    expect([describeValue('vj'), describeValue(5), describeValue(null)]).toEqual([
      "'vj'",
      '5',
      'null',
    ])
    expect(describeValue(new Map())).toBe('an object (Map)')
    expect(describeValue(() => 1)).toBe('a function')
  })
})
