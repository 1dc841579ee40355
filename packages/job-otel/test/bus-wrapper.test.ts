import { SpanKind } from '@opentelemetry/api'
import { createRedisAggregateBus, type RedisAggregateBus } from '@vega/job-redis'
import { type RedisServer, startRedisServer } from '@vega/redis-server'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type AggregateBusLike,
  type TraceAggregateBusOptions,
  traceAggregateBus,
} from '../src/index.js'
import { createOtel, deferred, ERROR, UNSET, useAsyncContext } from './support.js'

// What traceAggregateBus promises besides the two-process trace (bus.test.ts):
// bad input, untraced messages, dead letters, a send that fails. One process,
// a real redis-server.
let server: RedisServer
let redis: Redis
const disableContext = useAsyncContext()

beforeAll(async () => {
  server = await startRedisServer({ who: "@vega/job-otel's bus wrapper tests" })
  redis = new Redis(server.url)
})

afterAll(async () => {
  redis?.disconnect()
  await server?.dispose()
  disableContext()
})

const busOn = (prefix: string): RedisAggregateBus =>
  createRedisAggregateBus({ redis, prefix, partitions: 2, leaseMs: 3_000 })

describe('traceAggregateBus(bus, options): bad input is a TypeError at the call', () => {
  const WHERE = 'traceAggregateBus(bus, options)'

  it.each([
    [null, 'null'],
    [{}, 'an object'],
    [{ send() {} }, 'an object'],
    ['bus', "'bus'"],
  ])('a bus that is not one: %#', (bad, shown) => {
    expect(() => traceAggregateBus(bad as unknown as AggregateBusLike)).toThrow(
      new TypeError(
        `${WHERE}: bus must be an aggregate bus (with send and consume), got ${shown}.`,
      ),
    )
  })

  it.each([
    [{ tracer: null }, 'tracer must be an OpenTelemetry Tracer (with startSpan), got null.'],
    [{ tracer: {} }, 'tracer must be an OpenTelemetry Tracer (with startSpan), got an object.'],
    [{ crossProcess: 'child' }, "crossProcess must be 'link' or 'parent', got 'child'."],
  ])('%j', (options, message) => {
    expect(() => traceAggregateBus(busOn('bad'), options as TraceAggregateBusOptions)).toThrow(
      new TypeError(`${WHERE}: ${message}`),
    )
  })

  it('an unknown option, with the closest known one', () => {
    expect(() =>
      traceAggregateBus(busOn('bad'), { crossProces: 'link' } as TraceAggregateBusOptions),
    ).toThrow(/unknown option 'crossProces'; did you mean 'crossProcess'\?/)
  })
})

describe('a traced bus in one process', () => {
  it('handles an untraced message in a process span without a link, with the body as sent', async () => {
    const prefix = 'otel-untraced'
    const otel = createOtel()
    const traced = traceAggregateBus(busOn(prefix), { tracer: otel.tracer })
    const got = deferred<unknown>()
    const consumer = traced.consume('sales.Order', async ({ body }) => got.resolve(body))
    await busOn(prefix).send({ aggregate: 'sales.Order', id: 'order-1', body: { seq: 1 } })
    expect(await got.promise).toEqual({ seq: 1 })
    await consumer.stop({ mode: 'drain', deadline: 5_000 })
    const processed = otel.span('process sales.Order')
    expect(processed.kind).toBe(SpanKind.CONSUMER)
    expect(processed.links).toEqual([])
    expect(processed.parentSpanContext).toBeUndefined()
    expect(processed.status.code).toBe(UNSET)
  })

  it('dead-letters a message whose handler keeps failing, and deadLetters gives back the original body', async () => {
    const prefix = 'otel-dead'
    const otel = createOtel()
    const traced = traceAggregateBus(busOn(prefix), { tracer: otel.tracer })
    const failed = deferred()
    let attempts = 0
    const consumer = traced.consume(
      'sales.Order',
      async () => {
        attempts++
        if (attempts === 2) failed.resolve()
        throw new TypeError('cannot apply')
      },
      { retry: { attempts: 2, delay: 0 } },
    )
    await traced.send({ aggregate: 'sales.Order', id: 'order-2', body: { seq: 2 } })
    await failed.promise
    let letters = await traced.deadLetters('sales.Order')
    // The move to the dead-letter stream follows the last failure.
    for (let i = 0; letters.length === 0 && i < 500; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
      letters = await traced.deadLetters('sales.Order')
    }
    await consumer.stop({ mode: 'drain', deadline: 5_000 })
    expect(letters.map((letter) => letter.body)).toEqual([{ seq: 2 }])
    const processed = otel.all('process sales.Order')
    expect(processed.map((span) => span.status.code)).toEqual([ERROR, ERROR])
    expect(processed.map((span) => span.attributes['error.type'])).toEqual([
      'TypeError',
      'TypeError',
    ])
    expect(processed.map((span) => span.events.map((e) => e.name))).toEqual([
      ['exception'],
      ['exception'],
    ])
  })

  it('ends the send span ERROR, with one exception, when the bus refuses the message at once', () => {
    const otel = createOtel()
    const traced = traceAggregateBus(busOn('otel-refused'), { tracer: otel.tracer })
    expect(() => traced.send({ aggregate: 'sales.Order', id: '', body: { seq: 3 } })).toThrow(
      TypeError,
    )
    const send = otel.span('send sales.Order')
    expect(send.kind).toBe(SpanKind.PRODUCER)
    expect(send.status.code).toBe(ERROR)
    expect(send.attributes['error.type']).toBe('TypeError')
    expect(send.events.map((e) => e.name)).toEqual(['exception'])
  })

  it('ends the send span ERROR when the send fails later (a closed client)', async () => {
    const otel = createOtel()
    const client = new Redis(server.url)
    const traced = traceAggregateBus(
      createRedisAggregateBus({
        redis: client,
        prefix: 'otel-closed',
        partitions: 2,
        leaseMs: 3_000,
      }),
      { tracer: otel.tracer },
    )
    // Closed after the bus was made: the message is fine, Redis cannot take it.
    client.disconnect()
    const error = await traced
      .send({ aggregate: 'sales.Order', id: 'order-4', body: { seq: 4 } })
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(error).toBeInstanceOf(Error)
    const send = otel.span('send sales.Order')
    expect(send.status.code).toBe(ERROR)
    expect(send.attributes['error.type']).toBe((error as Error).name)
    expect(send.events.map((e) => e.name)).toEqual(['exception'])
  })
})
