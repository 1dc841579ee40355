import { createRuntime, run, shutdown } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import {
  AggregateDispatcher,
  CompositeDispatcher,
  createAggregateScheduling,
  createLifecycle,
  DefaultAggregateSchedulerSupplier,
  installAggregateScheduling,
  withAggregate,
} from '../src/index.js'

const handle = async () => {}

describe('withAggregate(taskFn, route)', () => {
  it('names itself when the aggregate is missing', () => {
    expect(() => withAggregate(handle, { id: 'order-1' } as never)).toThrow(
      new TypeError(
        "withAggregate(taskFn, { aggregate, id }): aggregate is required, e.g. { aggregate: 'sales.Order', id: orderId }.",
      ),
    )
  })

  it('names itself for a malformed aggregate, keeping the cause', () => {
    let caught: unknown
    try {
      withAggregate(handle, { aggregate: 'Order', id: 'order-1' })
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(TypeError)
    expect((caught as Error).message).toMatch(
      /^withAggregate\(taskFn, \{ aggregate, id \}\): Expected a named aggregate as "context\.Aggregate".*got "Order"\./,
    )
    expect((caught as Error).cause).toBeInstanceOf(TypeError)
  })

  it('rejects a misspelled route field with a suggestion', () => {
    expect(() =>
      withAggregate(handle, { aggregate: 'sales.Order', id: 'o-1', aggregat: 'x' } as never),
    ).toThrow(
      new TypeError(
        "withAggregate(taskFn, route): unknown option 'aggregat'; did you mean 'aggregate'? Known options: 'aggregate', 'id'.",
      ),
    )
  })
})

describe('createAggregateScheduling(options)', () => {
  it('is still reachable under its former name, installAggregateScheduling (deprecated)', () => {
    expect(installAggregateScheduling).toBe(createAggregateScheduling)
    expect(installAggregateScheduling({ parallelism: 2 }).name).toBe('createAggregateScheduling')
  })

  it('rejects a misspelled option with a suggestion', () => {
    expect(() => createAggregateScheduling({ paralelism: 8 } as never)).toThrow(
      new TypeError(
        "createAggregateScheduling(options): unknown option 'paralelism'; did you mean 'parallelism'? " +
          "Known options: 'parallelism', 'supplier', 'schedulerParallelism', 'statsInterval'.",
      ),
    )
  })

  it('accepts explicit undefined for every optional field', async () => {
    const plugin = createAggregateScheduling({
      parallelism: undefined,
      supplier: undefined,
      schedulerParallelism: undefined,
      statsInterval: undefined,
    })
    const runtime = createRuntime({ plugins: [plugin] })
    await expect(
      run(
        runtime,
        withAggregate(async () => 'handled', { aggregate: 'sales.Order', id: 'o-1' }),
      ),
    ).resolves.toBe('handled')
    await shutdown(runtime)
  })

  it('echoes options that are not an object', () => {
    expect(() => createAggregateScheduling('fast' as never)).toThrow(/got "fast"\./)
  })
})

describe('dispatcher and lifecycle options', () => {
  it('new AggregateDispatcher(options) rejects a misspelled option', () => {
    expect(
      () => new AggregateDispatcher({ name: 'orders', handle, maxInflight: 10 } as never),
    ).toThrow(
      /^new AggregateDispatcher\(options\): unknown option 'maxInflight'; did you mean 'maxInFlight'\?/,
    )
  })

  it('new CompositeDispatcher(options) rejects a misspelled option', () => {
    const supplier = new DefaultAggregateSchedulerSupplier('composite-options', 1)
    expect(
      () =>
        new CompositeDispatcher({
          name: 'all',
          schedulerSupplier: supplier,
          children: () => [],
          chidren: () => [],
        } as never),
    ).toThrow(
      /^new CompositeDispatcher\(options\): unknown option 'chidren'; did you mean 'children'\?/,
    )
    return supplier.stopGracefully()
  })

  it('createLifecycle(components, options) rejects a misspelled option', () => {
    expect(() =>
      createLifecycle([], { shutdownTimeout: 1_000, shutdownTimout: 5 } as never),
    ).toThrow(
      new TypeError(
        "createLifecycle(components, options): unknown option 'shutdownTimout'; did you mean 'shutdownTimeout'? Known options: 'shutdownTimeout', 'timers'.",
      ),
    )
  })

  it('a dispatcher accepts explicit undefined for its optional fields', async () => {
    const dispatcher = new AggregateDispatcher({
      name: 'undefined-fields',
      handle,
      source: undefined,
      parallelism: undefined,
      schedulerSupplier: undefined,
      onError: undefined,
      maxInFlight: undefined,
      now: undefined,
    })
    expect(dispatcher.name).toBe('undefined-fields')
    const lifecycle = createLifecycle([dispatcher], { shutdownTimeout: 1_000, timers: undefined })
    await lifecycle.start()
    await lifecycle.stop()
  })
})
