import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, run, settle, shutdown } from '@vega/job-core'
import { isStorageUnavailableError, StorageUnavailableError } from '@vega/job-distributed'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createRedisCoordination,
  fencingToken,
  isLeaseLostError,
  isRedisUnavailableError,
  isRemoteTaskError,
  LeaseLostError,
  RedisUnavailableError,
  RemoteTaskError,
} from '../src/index.js'
import { type RedisServer, startRedisServer } from './redis-server.js'
import { D, eventually, type Setup, setup, uniquePrefix } from './support.js'

let server: RedisServer
const opened: Setup[] = []
beforeAll(async () => {
  server = await startRedisServer()
})
afterAll(async () => {
  for (const { redis } of opened) redis.disconnect()
  await server?.dispose()
})

function fresh(options: Parameters<typeof setup>[1] = {}): Setup {
  const value = setup(server.url, options)
  opened.push(value)
  return value
}

describe('createRedisCoordination(options): bad options fail at once, naming what to do', () => {
  it('a missing client', () => {
    expect(() =>
      createRedisCoordination({
        redis: undefined as unknown as Redis,
        prefix: 'vj',
        leaseMs: 1000,
      }),
    ).toThrow(
      new TypeError(
        'createRedisCoordination(options): redis is missing; pass an ioredis client: { redis: new Redis(url), … } (or a new Cluster(nodes)).',
      ),
    )
  })

  it('something that is not an ioredis client', () => {
    expect(() =>
      createRedisCoordination({
        redis: 'redis://x' as unknown as Redis,
        prefix: 'vj',
        leaseMs: 1000,
      }),
    ).toThrow(/redis must be an ioredis client \(new Redis\(url\)\), got 'redis:\/\/x'/)
  })

  it('a closed client', async () => {
    const redis = new Redis(server.url)
    const ended = new Promise((resolve) => redis.once('end', resolve))
    await redis.quit()
    await ended
    expect(() => createRedisCoordination({ redis, prefix: 'vj', leaseMs: 1000 })).toThrow(
      /redis is a closed client \(status 'end'\); pass an open one/,
    )
  })

  it('a misspelled option: a TypeError that suggests the right name', () => {
    const { redis } = fresh()
    expect(() =>
      createRedisCoordination({
        redis,
        prefix: 'vj',
        leaseMs: 1000,
        conectTimeoutMs: 500,
      } as never),
    ).toThrow(
      new TypeError(
        "createRedisCoordination(options): unknown option 'conectTimeoutMs'; did you mean 'connectTimeoutMs'? Known options: 'redis', 'prefix', 'leaseMs', 'codec', 'connectTimeoutMs', 'leaderContext'.",
      ),
    )
    const cluster = createRedisCoordination({ redis, prefix: 'vj', leaseMs: 1000 })
    expect(() => cluster.createSerialize({ concurency: 2 } as never)).toThrow(
      /cluster.createSerialize\(options\): unknown option 'concurency'; did you mean 'concurrency'\?/,
    )
  })

  it('an empty prefix, or one with whitespace', () => {
    const { redis } = fresh()
    expect(() => createRedisCoordination({ redis, prefix: '', leaseMs: 1000 })).toThrow(
      new TypeError(
        "createRedisCoordination(options): prefix must be a non-empty string without whitespace (it starts every key), got ''.",
      ),
    )
    expect(() => createRedisCoordination({ redis, prefix: 'my app', leaseMs: 1000 })).toThrow(
      TypeError,
    )
  })

  it('leaseMs ≤ 0, fractional or not a number', () => {
    const { redis } = fresh()
    for (const leaseMs of [0, -5, 2.5, Number.NaN, '1000']) {
      expect(() =>
        createRedisCoordination({ redis, prefix: 'vj', leaseMs: leaseMs as number }),
      ).toThrow(RangeError)
    }
    expect(() => createRedisCoordination({ redis, prefix: 'vj', leaseMs: 0 })).toThrow(
      'createRedisCoordination(options): leaseMs must be an integer ≥ 10 (milliseconds a grant holds without renewal), got 0.',
    )
  })

  it('a codec without encode/decode, a bad connectTimeoutMs, a bad serialize concurrency', () => {
    const { redis, cluster } = fresh()
    expect(() =>
      createRedisCoordination({
        redis,
        prefix: 'vj',
        leaseMs: 1000,
        codec: { encode: JSON.stringify } as never,
      }),
    ).toThrow(/codec must be \{ encode\(value\): string, decode\(text\): unknown \}/)
    expect(() =>
      createRedisCoordination({ redis, prefix: 'vj', leaseMs: 1000, connectTimeoutMs: 0 }),
    ).toThrow(/connectTimeoutMs must be a positive integer \(ms\), got 0/)
    expect(() => cluster.createSerialize({ concurrency: 0 })).toThrow(
      'cluster.createSerialize({ concurrency }): concurrency must be an integer ≥ 1, got 0.',
    )
  })

  it('a runtime without cluster.plugin: the call ends in error naming the plugin', async () => {
    const { cluster } = fresh()
    const runtime = createRuntime({ plugins: [installCoordination] })
    const task = run(
      runtime,
      withCoordinator(async () => 1, cluster.serialize, { key: 'k' }),
    )
    const outcome = await settle(task)
    expect(outcome.status).toBe('error')
    expect(String((outcome as { error: unknown }).error)).toMatch(
      /cluster\.serialize: this runtime does not have the cluster's plugin/,
    )
  })

  it('fencingToken(ctx) outside a leased body is a TypeError saying where it works', async () => {
    const runtime = createRuntime()
    const task = run(runtime, (ctx) => fencingToken(ctx))
    const outcome = await settle(task)
    expect(String((outcome as { error: unknown }).error)).toMatch(
      /fencingToken\(ctx\): task #1 holds no distributed lease \(@vega\/job-redis, @vega\/job-postgres\)/,
    )
  })
})

describe('a value the codec cannot encode', () => {
  it('the leader’s caller gets it; the caller in the other process fails clearly, never hangs; nothing is left', async () => {
    const prefix = uniquePrefix()
    const a = fresh({ prefix })
    const b = fresh({ prefix })
    let started = false
    const leader = run(
      a.runtime,
      withCoordinator(
        async (ctx) => {
          started = true
          await ctx.sleep(4 * D)
          return { at: 1n } // BigInt: JSON cannot carry it
        },
        a.cluster.dedupe,
        { key: 'k' },
      ),
    )
    await eventually(() => started, 5000, 'the leader started')
    const follower = run(
      b.runtime,
      withCoordinator(async () => 'ran', b.cluster.dedupe, { key: 'k' }),
    )
    expect(await leader).toEqual({ at: 1n })
    const error = await follower.promise.catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RemoteTaskError)
    expect((error as RemoteTaskError).remoteName).toBe('CodecError')
    expect((error as Error).message).toMatch(
      /could not be encoded by the codec, so it cannot reach this caller: .*BigInt/,
    )
    await shutdown(a.runtime)
    await shutdown(b.runtime)
    expect(a.cluster.inspect()).toEqual({ waiters: 0, leases: 0, keys: 0 })
    expect(b.cluster.inspect()).toEqual({ waiters: 0, leases: 0, keys: 0 })
    const keys = await a.redis.keys(`${prefix}:*`)
    expect(keys.filter((key) => !key.endsWith(':fence') && !key.includes(':result:'))).toEqual([])
    // The result's copy for late followers expires with the lease.
    for (const key of keys.filter((k) => k.includes(':result:'))) {
      const ttl = await a.redis.pttl(key)
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual(1500)
    }
  })
})

describe('error guards', () => {
  it('is*Error knows each error class of the package, also from another copy (by brand, not instanceof)', () => {
    const lost = new LeaseLostError('lost', 'k', 3)
    const down = new RedisUnavailableError('down', 'acquire')
    const remote = new RemoteTaskError('failed', 'TypeError')
    expect([
      isLeaseLostError(lost),
      isLeaseLostError(down),
      isLeaseLostError(new Error('x')),
    ]).toEqual([true, false, false])
    expect([isRedisUnavailableError(down), isRedisUnavailableError(remote)]).toEqual([true, false])
    expect([isRemoteTaskError(remote), isRemoteTaskError(lost), isRemoteTaskError(null)]).toEqual([
      true,
      false,
      false,
    ])
    // What another copy of @vega/job-distributed (whose LeaseLostError this is) would make: the same global brand, another class.
    const foreign = Object.defineProperty(
      new Error('lost'),
      Symbol.for('@vega/job-distributed/LeaseLostError'),
      {
        value: true,
      },
    )
    expect(foreign instanceof LeaseLostError).toBe(false)
    expect(isLeaseLostError(foreign)).toBe(true)
  })

  it("RedisUnavailableError is @vega/job-distributed's StorageUnavailableError too, and its guard still knows one from version 1.0 (its own brand only)", () => {
    const down = new RedisUnavailableError('down', 'renew', { cause: new Error('ECONNRESET') })
    expect(down).toBeInstanceOf(StorageUnavailableError)
    expect(isStorageUnavailableError(down)).toBe(true)
    expect(down).toMatchObject({ name: 'RedisUnavailableError', operation: 'renew' })
    expect(String(down)).toBe('RedisUnavailableError: down')
    // Another engine's error is a StorageUnavailableError but not this one.
    expect(isRedisUnavailableError(new StorageUnavailableError('down', 'renew'))).toBe(false)
    const older = Object.defineProperty(
      new Error('down'),
      Symbol.for('@vega/job-redis/RedisUnavailableError'),
      { value: true },
    )
    expect(isRedisUnavailableError(older)).toBe(true)
  })
})

describe('the subscriber connection', () => {
  for (const where of ['a live server', 'no server at all'] as const) {
    it(`never keeps a process alive after its client closed (${where})`, async () => {
      const url = where === 'a live server' ? server.url : 'redis://127.0.0.1:1'
      const script = fileURLToPath(new URL('./children/exits.mjs', import.meta.url))
      const { stdout } = await promisify(execFile)('node', [script, url], { timeout: 20_000 })
      expect(stdout).toBe('')
    })
  }
})

describe('Redis unreachable', () => {
  it('a client that closed after creation: the call ends in error with RedisUnavailableError, nothing kept', async () => {
    const s = fresh()
    const ended = new Promise((resolve) => s.redis.once('end', resolve))
    await s.redis.quit()
    await ended
    const task = run(
      s.runtime,
      withCoordinator(async () => 1, s.cluster.serialize, { key: 'k' }),
    )
    const outcome = await settle(task)
    expect(outcome.status).toBe('error')
    const error = (outcome as { error: unknown }).error
    expect(error).toBeInstanceOf(RedisUnavailableError)
    expect((error as Error).message).toMatch(
      /^@vega\/job-redis acquire: the Redis client is closed/,
    )
    expect(s.cluster.inspect()).toEqual({ waiters: 0, leases: 0, keys: 0 })
  })
})
