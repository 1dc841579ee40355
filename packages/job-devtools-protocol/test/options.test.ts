import { createRuntime, createTestClock } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import { connectDevtools, createInProcessTransport, type Envelope, toWire } from '../src/index.js'

function setup() {
  const runtime = createRuntime({ clock: createTestClock() })
  const batches: Envelope[][] = []
  const transport = createInProcessTransport((batch) => {
    batches.push([...batch])
  })
  return { runtime, transport, batches }
}

describe('connectDevtools(runtime, transport, options)', () => {
  it('rejects a misspelled option with a suggestion, before connecting', () => {
    const { runtime, transport, batches } = setup()
    expect(() => connectDevtools(runtime, transport, { flushMS: 10 } as never)).toThrow(
      new TypeError(
        "connectDevtools(runtime, transport, options): unknown option 'flushMS'; did you mean 'flushMs'? " +
          "Known options: 'flushMs', 'bufferSize', 'sanitize', 'sessionId', 'clock', 'lib', 'wire', 'onError'.",
      ),
    )
    expect(batches).toEqual([])
  })

  it('checks the keys of options.wire at connect time', () => {
    const { runtime, transport } = setup()
    expect(() => connectDevtools(runtime, transport, { wire: { stacks: false } as never })).toThrow(
      /^connectDevtools\(runtime, transport, options\) in options\.wire: unknown option 'stacks'; did you mean 'stack'\?/,
    )
    expect(() => connectDevtools(runtime, transport, { wire: 'none' as never })).toThrow(
      /options\.wire must be an object, got 'none'\./,
    )
  })

  it('echoes bad values, strings quoted', () => {
    const { runtime, transport } = setup()
    expect(() => connectDevtools(runtime, transport, { flushMs: '10' as never })).toThrow(
      new RangeError(
        "connectDevtools(runtime, transport, options): options.flushMs must be a finite number ≥ 0, got '10'. Use 0 to send each envelope at once.",
      ),
    )
    expect(() => connectDevtools(runtime, transport, { bufferSize: 0 })).toThrow(/got 0\./)
    expect(() => connectDevtools(runtime, transport, { sessionId: '' })).toThrow(
      /options\.sessionId must be a non-empty string, got ''\./,
    )
    expect(() => connectDevtools(runtime, transport, { lib: 3 as never })).toThrow(
      /options\.lib must be a string, got 3\./,
    )
    expect(() => connectDevtools(runtime, transport, 'fast' as never)).toThrow(
      /options must be an object, got 'fast'\./,
    )
  })

  it('accepts explicit undefined for every option', () => {
    const { runtime, transport, batches } = setup()
    const disconnect = connectDevtools(runtime, transport, {
      flushMs: undefined,
      bufferSize: undefined,
      sanitize: undefined,
      sessionId: 'explicit-undefined',
      clock: undefined,
      lib: undefined,
      wire: undefined,
      onError: undefined,
    })
    disconnect()
    expect(batches.flat()[0]?.sid).toBe('explicit-undefined')
  })
})

describe('toWire(value, options)', () => {
  it('rejects a misspelled limit with a suggestion', () => {
    expect(() => toWire({}, { maxDepht: 2 } as never)).toThrow(
      new TypeError(
        "toWire(value, options): unknown option 'maxDepht'; did you mean 'maxDepth'? " +
          "Known options: 'maxDepth', 'maxItems', 'maxStringLength', 'maxNodes', 'stack'.",
      ),
    )
  })

  it('echoes a bad limit, strings quoted', () => {
    expect(() => toWire({}, { maxItems: '5' as never })).toThrow(
      "toWire(value, options): options.maxItems must be an integer ≥ 0, got '5'.",
    )
  })

  it('accepts explicit undefined for every limit', () => {
    expect(
      toWire('abc', {
        maxDepth: undefined,
        maxItems: undefined,
        maxStringLength: undefined,
        maxNodes: undefined,
        stack: undefined,
      }),
    ).toBe('abc')
  })
})
