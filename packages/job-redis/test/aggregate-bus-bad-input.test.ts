import { describeBusBadInput } from '@vega/distributed-tests/bus'
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

// The checks every engine's bus makes (the options they share, send, consume and stop).
describeBusBadInput({ title: 'createRedisAggregateBus', storage: 'Redis', make, fresh: make({}) })

describe('createRedisAggregateBus rejects bad options before touching Redis', () => {
  it.each([
    [{ redis: undefined }, TypeError, /redis is missing/],
    [{ redis: {} }, TypeError, /must be an ioredis client/],
    [{ prefix: '' }, TypeError, /prefix must be a non-empty string/],
    [{ prefix: 'a b' }, TypeError, /without whitespace/],
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

  it('takes a Redis Cluster client as it takes one primary, and still checks it is open', () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true })
    expect(make({ redis: cluster as never })).not.toThrow()
    cluster.disconnect()
    expect(make({ redis: cluster as never })).toThrow(/redis is a closed client/)
  })
})
