import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRedisAggregateBus, type RedisAggregateBusOptions } from '../src/index.js'
import { type RedisServer, startRedisServer } from './redis-server.js'

let server: RedisServer
let redis: Redis

beforeAll(async () => {
  server = await startRedisServer()
  redis = new Redis(server.url, { maxRetriesPerRequest: null })
})

afterAll(async () => {
  redis.disconnect()
  await server.dispose()
})

const make = (options: Partial<RedisAggregateBusOptions>) => () =>
  createRedisAggregateBus({
    redis,
    prefix: 'bad',
    partitions: 8,
    leaseMs: 1000,
    ...options,
  } as RedisAggregateBusOptions)

describe('createRedisAggregateBus rejects bad options before touching Redis', () => {
  it.each([
    [{ redis: undefined }, TypeError, /redis is missing/],
    [{ redis: {} }, TypeError, /must be an ioredis client/],
    [{ prefix: '' }, TypeError, /prefix must be a non-empty string/],
    [{ prefix: 'a b' }, TypeError, /without whitespace/],
    [{ partitions: undefined }, TypeError, /partitions is missing/],
    [{ partitions: 0 }, RangeError, /partitions must be an integer from 1 to 16384, got 0/],
    [{ partitions: 2.5 }, RangeError, /partitions must be an integer/],
    [{ leaseMs: 5 }, RangeError, /leaseMs \(ms\) must be an integer from 30/],
    [{ leaseMs: undefined }, TypeError, /leaseMs is missing/],
    [{ connectTimeoutMs: 0 }, RangeError, /connectTimeoutMs/],
    [{ codec: { encode: 1 } }, TypeError, /codec must be/],
    [{ partitons: 8 }, TypeError, /unknown option 'partitons'; did you mean 'partitions'\?/],
    [{ conectTimeoutMs: 8 }, TypeError, /did you mean 'connectTimeoutMs'\?/],
  ] as [Record<string, unknown>, ErrorConstructor, RegExp][])('%o', (options, type, message) => {
    expect(make(options as Partial<RedisAggregateBusOptions>)).toThrow(type)
    expect(make(options as Partial<RedisAggregateBusOptions>)).toThrow(message)
  })

  it('refuses a closed client', async () => {
    const closed = new Redis(server.url)
    const ended = new Promise((resolve) => closed.once('end', resolve))
    await closed.quit()
    await ended
    expect(make({ redis: closed })).toThrow(/closed client/)
  })

  it('throws for a bad message at send, synchronously', () => {
    const bus = make({})()
    const send = (message: unknown) => () => bus.send(message as never)
    expect(send(null)).toThrow(/message must be an object/)
    expect(send({ aggregate: 'Order', id: 'x', body: 1 })).toThrow(/"context.Aggregate"/)
    expect(send({ aggregate: 'sales.Order', id: '', body: 1 })).toThrow(
      /id must be a non-empty string/,
    )
    expect(send({ aggregate: 'sales.Order', id: 7, body: 1 })).toThrow(TypeError)
    expect(send({ aggregate: 'sales.Order', id: 'x', body: () => 1 })).toThrow(/cannot be encoded/)
  })

  it('takes a Redis Cluster client as it takes one primary, and still checks it is open', () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true })
    expect(make({ redis: cluster as never })).not.toThrow()
    cluster.disconnect()
    expect(make({ redis: cluster as never })).toThrow(/redis is a closed client/)
  })

  it('throws for bad consume and stop arguments', async () => {
    const bus = make({})()
    expect(() => bus.consume('sales', async () => {})).toThrow(/"context.Aggregate"/)
    expect(() => bus.consume('sales.Order', 'nope' as never)).toThrow(/handler must be a function/)
    expect(() => bus.consume('sales.Order', async () => {}, { parallelism: 0 })).toThrow(RangeError)
    expect(() => bus.consume('sales.Order', async () => {}, { retry: 0 })).toThrow(
      /retry must be an integer/,
    )
    expect(() =>
      bus.consume('sales.Order', async () => {}, { retry: { attempts: 2, delay: -1 } }),
    ).toThrow(/retry.delay/)
    expect(() => bus.consume('sales.Order', async () => {}, { retry: 'x' as never })).toThrow(
      /retry must be a number of attempts/,
    )
    expect(() => bus.consume('sales.Order', async () => {}, { parallel: 2 } as never)).toThrow(
      /unknown option 'parallel'/,
    )
    expect(() =>
      bus.consume('sales.Order', async () => {}, {
        retry: { attempts: 2, retryif: () => true } as never,
      }),
    ).toThrow(/unknown option 'retryif'; did you mean 'retryIf'\?/)
    const consumer = bus.consume('sales.Order', async () => {})
    expect(() => consumer.stop({ deadLine: 10 } as never)).toThrow(
      /consumer.stop\(options\): unknown option 'deadLine'; did you mean 'deadline'\?/,
    )
    expect(() => consumer.stop({ mode: 'now' as never })).toThrow(/'drain' or 'handover'/)
    expect(() => consumer.stop({ deadline: -1 })).toThrow(RangeError)
    await consumer.stop()
    await expect(bus.deadLetters('sales.Order', 0)).rejects.toThrow(/count must be an integer/)
  })
})
