import { describe, expect, it } from 'vitest'
import { checkDeadLettersCall, type DeadLetter, decodeDeadLetter, jsonCodec } from '../src/index.js'

const stored: DeadLetter<string> = {
  deadId: '7',
  aggregate: 'sales.Order',
  id: 'order-1',
  body: '{"type":"pay","cents":120}',
  partition: 3,
  entryId: '41',
  attempts: 3,
  error: { name: 'TypeError', message: 'no card' },
  consumerId: 'vm:1:a',
  fence: 9,
}

describe('decodeDeadLetter', () => {
  it('decodes the body with the codec and keeps every other field as stored', () => {
    expect(decodeDeadLetter(jsonCodec, stored)).toEqual({
      ...stored,
      body: { type: 'pay', cents: 120 },
    })
  })

  it('leaves a body the codec cannot decode as the stored text', () => {
    const bad = { ...stored, body: '{not json' }
    expect(decodeDeadLetter(jsonCodec, bad)).toEqual(bad)
    const refusing = {
      encode: String,
      decode: (): unknown => {
        throw new Error('unknown version')
      },
    }
    expect(decodeDeadLetter(refusing, stored).body).toBe(stored.body)
  })
})

describe('checkDeadLettersCall', () => {
  it('returns the aggregate; a bad aggregate or count is an error naming it and the value', () => {
    expect(checkDeadLettersCall('sales.Order', 100)).toBe('sales.Order')
    expect(() => checkDeadLettersCall('orders', 100)).toThrow(
      /^bus\.deadLetters\(aggregate, count\): aggregate must be a "context\.Aggregate" string .*got 'orders'\.$/,
    )
    expect(() => checkDeadLettersCall('sales.Order', 0)).toThrow(
      new RangeError(
        'bus.deadLetters(aggregate, count): count must be an integer from 1 to 1000000, got 0.',
      ),
    )
    expect(() => checkDeadLettersCall('sales.Order', 1_000_001)).toThrow(RangeError)
    expect(() => checkDeadLettersCall('sales.Order', 2.5)).toThrow(/got 2\.5\.$/)
  })
})
