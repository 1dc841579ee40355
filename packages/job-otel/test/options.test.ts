import { createRuntime, inspect, type Runtime } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import { installTracing, type TracingOptions } from '../src/index.js'
import { createOtel } from './support.js'

const install = (options: unknown, runtime: Runtime = createRuntime()) =>
  installTracing(runtime, options as TracingOptions)

describe('bad input is a TypeError at install, naming the option and the value', () => {
  const { tracer, meter } = createOtel()

  it.each([
    [{}, 'an object'],
    [null, 'null'],
    ['tracer', "'tracer'"],
    [42, '42'],
    [{ startActiveSpan() {} }, 'an object'],
  ])('tracer %j', (bad, shown) => {
    expect(() => install({ tracer: bad, meter })).toThrow(TypeError)
    expect(() => install({ tracer: bad, meter })).toThrow(
      `installTracing(runtime, options): tracer must be an OpenTelemetry Tracer (with startSpan), got ${shown}.`,
    )
  })

  it.each([
    [{}, 'an object'],
    [null, 'null'],
    [tracer, 'an object'],
    [() => {}, 'a function'],
  ])('meter %#', (bad, shown) => {
    expect(() => install({ tracer, meter: bad })).toThrow(TypeError)
    expect(() => install({ tracer, meter: bad })).toThrow(
      `meter must be an OpenTelemetry Meter (with createHistogram and createObservableUpDownCounter), got ${shown}.`,
    )
  })

  it.each([
    ['span', "'span'"],
    ['event', "'event'"],
    [true, 'true'],
    [null, 'null'],
  ])('attempts %j', (bad, shown) => {
    expect(() => install({ tracer, meter, attempts: bad })).toThrow(
      new TypeError(
        `installTracing(runtime, options): attempts must be 'spans' or 'events', got ${shown}.`,
      ),
    )
  })

  it('attributes that is not a function', () => {
    expect(() => install({ tracer, meter, attributes: { tenant: 'a' } })).toThrow(
      new TypeError(
        'installTracing(runtime, options): attributes must be a function (task) => ({ … }), got an object.',
      ),
    )
  })

  it('an unknown option key, with the closest known one', () => {
    expect(() => install({ tracr: tracer })).toThrow(TypeError)
    expect(() => install({ tracr: tracer })).toThrow(
      "installTracing(runtime, options): unknown option 'tracr'; did you mean 'tracer'?",
    )
    expect(() => install({ tracer, meter, attempt: 'spans' })).toThrow("did you mean 'attempts'?")
  })

  it('options that are not an object', () => {
    expect(() => install('spans')).toThrow(TypeError)
    expect(() => install('spans')).toThrow(
      'installTracing(runtime, options): options must be an object',
    )
  })

  it('a runtime that is not one', () => {
    expect(() => installTracing({ name: 'fake' } as Runtime, { tracer, meter })).toThrow(
      new TypeError(
        'installTracing(runtime, options): runtime must be a runtime from createRuntime(), got an object.',
      ),
    )
  })

  it('leaves nothing installed when it throws', () => {
    const runtime = createRuntime()
    expect(() => install({ tracer, meter, attempts: 'nope' }, runtime)).toThrow(TypeError)
    expect(inspect(runtime).sizes.listeners).toBe(0)
    expect(inspect(runtime).sizes.attemptWrappers).toBe(0)
  })

  it('accepts every option left out, or set to undefined', () => {
    const runtime = createRuntime()
    const uninstall = install(
      { tracer, meter, attempts: undefined, attributes: undefined },
      runtime,
    )
    expect(inspect(runtime).sizes.listeners).toBe(1)
    uninstall()
  })
})
