import type { Coordinator } from '@vega/job-coordination'
import { assertKnownKeys, type Plugin } from '@vega/job-core'
import type { Redis, Cluster as RedisCluster } from 'ioredis'
import { type Codec, jsonCodec } from './codec.js'
import { Cluster } from './internal/cluster.js'
import { RedisIO } from './internal/redis-io.js'
import { checkLeaderContext, type LeaderContext } from './leader-context.js'
import { clusterDedupe } from './strategies/dedupe.js'
import { clusterExhaust } from './strategies/exhaust.js'
import { clusterKeepLatest } from './strategies/keep-latest.js'
import { clusterRestart } from './strategies/restart.js'
import { clusterSerialize } from './strategies/serialize.js'

/**
 * Options of {@link createRedisCoordination}.
 *
 * @example
 * ```ts
 * const options: RedisCoordinationOptions = { redis: new Redis(), prefix: 'vj', leaseMs: 10_000 }
 * ```
 */
export interface RedisCoordinationOptions {
  /**
   * An open ioredis client: a `Redis` to one primary, or a `Cluster` (every
   * script touches one slot: a key's parts share a hash tag). The package
   * never closes it; it opens one duplicate for pub/sub.
   */
  redis: Redis | RedisCluster
  /** Starts every key and the pub/sub channel; processes that coordinate share it. Non-empty, no whitespace. */
  prefix: string
  /** How long a grant holds without renewal, in ms (integer ≥ 10). Holders renew every leaseMs / 3; waiters re-check as often. */
  leaseMs: number
  /** How a dedupe leader's value reaches callers in other processes; strict JSON by default. */
  codec?: Codec
  /** A Redis round trip that takes longer fails with `RedisUnavailableError`; default min(leaseMs, 5000). */
  connectTimeoutMs?: number
  /**
   * Carries a string (a trace context, say) from each dedupe leader to the
   * callers in other processes that join it; see {@link LeaderContext}.
   * Default: none.
   */
  leaderContext?: LeaderContext | undefined
}

/**
 * Options of {@link RedisCoordination.createSerialize}.
 *
 * @example
 * ```ts
 * const uploads = cluster.createSerialize({ concurrency: 2, name: 'uploads' })
 * ```
 */
export interface RedisSerializeOptions {
  /** Bodies per key at once, cluster-wide; a positive integer. Every process must use the same number for a key. */
  concurrency?: number
  /** The coordinator's name in diagnostic events; default `'serialize'`. */
  name?: string
}

/**
 * What {@link createRedisCoordination} returns: the five strategies, carried
 * across processes, and the plugin that connects them to a runtime.
 *
 * @example
 * ```ts
 * const cluster: RedisCoordination = createRedisCoordination({ redis, prefix: 'vj', leaseMs: 10_000 })
 * const runtime = createRuntime({ plugins: [installCoordination, cluster.plugin] })
 * ```
 */
export interface RedisCoordination {
  /** One body per key cluster-wide; every caller anywhere gets its value. */
  readonly dedupe: Coordinator
  /** The newest call anywhere proceeds at once; the running one anywhere is cancelled. */
  readonly restart: Coordinator
  /** One cluster-wide FIFO per key, one body at a time. */
  readonly serialize: Coordinator
  /** A call proceeds only if no body for the key runs anywhere. */
  readonly exhaust: Coordinator
  /** One running + one waiting cluster-wide; a newer waiting call supersedes the older. */
  readonly keepLatest: Coordinator
  /** Install it next to `installCoordination` in every runtime that uses these coordinators. */
  readonly plugin: Plugin
  /** A serialize with `concurrency` bodies per key, cluster-wide. */
  createSerialize(options?: RedisSerializeOptions): Coordinator
  /** What this process keeps right now: parked calls, held leases, keys with waiters. */
  inspect(): { waiters: number; leases: number; keys: number }
  /** How this process's waiters were woken so far: how often they fell back to the polling floor. */
  counters(): RedisCoordinationCounters
}

/**
 * What {@link RedisCoordination.counters} reports: totals since the
 * coordination was created, for this process.
 *
 * @example
 * ```ts
 * const before = cluster.counters().floorWakeUps
 * await Promise.all(calls)
 * // 0 when every grant reached its waiter by message, none on the polling floor.
 * console.log(cluster.counters().floorWakeUps - before)
 * ```
 */
export interface RedisCoordinationCounters {
  /**
   * How many times a waiter here asked Redis again because nothing woke it
   * within leaseMs / 3 (its polling floor). Grants and wake-ups come by
   * pub/sub message; the floor keeps a long wait's place in the queue alive,
   * and covers a message that was lost (a subscriber connection that dropped).
   */
  readonly floorRechecks: number
  /**
   * Of {@link floorRechecks}, those that found the call's turn had already
   * come (its grant, its dedupe leader's result, or a newer keepLatest call):
   * each is a wake-up message this process did not hear, and cost its call up
   * to leaseMs / 3. A count that keeps growing means messages do not arrive.
   */
  readonly floorWakeUps: number
}

const COORDINATION_OPTIONS = [
  'redis',
  'prefix',
  'leaseMs',
  'codec',
  'connectTimeoutMs',
  'leaderContext',
]
const SERIALIZE_OPTIONS = ['concurrency', 'name']

function fail(message: string): never {
  throw new TypeError(`createRedisCoordination(options): ${message}`)
}

function checkRedis(redis: unknown): Redis | RedisCluster {
  if (redis === undefined || redis === null) {
    fail(
      'redis is missing; pass an ioredis client: { redis: new Redis(url), … } (or a new Cluster(nodes)).',
    )
  }
  const client = redis as Partial<Redis>
  if (
    typeof client.evalsha !== 'function' ||
    typeof client.duplicate !== 'function' ||
    typeof client.status !== 'string'
  ) {
    fail(`redis must be an ioredis client (new Redis(url)), got ${describe(redis)}.`)
  }
  if (client.status === 'end' || client.status === 'close') {
    fail(
      `redis is a closed client (status '${client.status}'); pass an open one: quit() and disconnect() end a client for good.`,
    )
  }
  return redis as Redis | RedisCluster
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`
  if (typeof value === 'object' && value !== null)
    return `an object (${value.constructor?.name ?? 'Object'})`
  return String(value)
}

/**
 * Carries dedupe, restart, serialize, exhaust and keepLatest across processes
 * sharing one Redis primary, with leases (renewed every leaseMs / 3 while a
 * body runs) and fencing tokens. Within one process each behaves like the
 * local strategy of `@vega/job-coordination`. Throws `TypeError` /
 * `RangeError` for bad options, before touching Redis.
 *
 * @example
 * ```ts
 * import { createRuntime, run } from '@vega/job-core'
 * import { installCoordination, withCoordinator } from '@vega/job-coordination'
 * import { createRedisCoordination, fencingToken } from '@vega/job-redis'
 * import { Redis } from 'ioredis'
 *
 * const cluster = createRedisCoordination({ redis: new Redis(), prefix: 'vj', leaseMs: 10_000 })
 * const runtime = createRuntime({ plugins: [installCoordination, cluster.plugin] })
 * const save = (id: string, body: string) =>
 *   withCoordinator(async (ctx) => writeDoc(id, body, (await fencingToken(ctx)).fence), cluster.serialize, {
 *     key: ['doc', id],
 *   })
 * await run(runtime, save('42', 'hello'))
 * ```
 */
export function createRedisCoordination(options: RedisCoordinationOptions): RedisCoordination {
  if (options === null || typeof options !== 'object') {
    fail("options must be an object such as { redis, prefix: 'vj', leaseMs: 10_000 }.")
  }
  assertKnownKeys('createRedisCoordination(options)', options, COORDINATION_OPTIONS)
  const redis = checkRedis(options.redis)
  const { prefix, leaseMs } = options
  if (typeof prefix !== 'string' || prefix.trim() === '' || /\s/.test(prefix)) {
    fail(
      `prefix must be a non-empty string without whitespace (it starts every key), got ${describe(prefix)}.`,
    )
  }
  if (typeof leaseMs !== 'number' || !Number.isInteger(leaseMs) || leaseMs < 10) {
    throw new RangeError(
      `createRedisCoordination(options): leaseMs must be an integer ≥ 10 (milliseconds a grant holds without renewal), got ${describe(leaseMs)}.`,
    )
  }
  const codec = options.codec ?? jsonCodec
  if (
    codec === null ||
    typeof codec !== 'object' ||
    typeof codec.encode !== 'function' ||
    typeof codec.decode !== 'function'
  ) {
    fail(`codec must be { encode(value): string, decode(text): unknown }, got ${describe(codec)}.`)
  }
  const connectTimeoutMs = options.connectTimeoutMs ?? Math.min(leaseMs, 5000)
  if (
    typeof connectTimeoutMs !== 'number' ||
    !Number.isInteger(connectTimeoutMs) ||
    connectTimeoutMs < 1
  ) {
    throw new RangeError(
      `createRedisCoordination(options): connectTimeoutMs must be a positive integer (ms), got ${describe(connectTimeoutMs)}.`,
    )
  }

  const leaderContext = checkLeaderContext(options.leaderContext)

  const cluster = new Cluster(
    new RedisIO(redis, prefix, leaseMs, connectTimeoutMs),
    codec,
    leaderContext,
  )
  // The user's client ended for good: its subscriber duplicate goes with it (no reconnect loop left behind).
  redis.once('end', () => void cluster.close())
  const plugin: Plugin = {
    name: '@vega/job-redis',
    install(host) {
      cluster.hosts.add(host)
      // Connected before the first call, so its first subscription is not left to the polling floor.
      cluster.listen()
      const off = host.onShutdown(() => {
        for (const waiter of [...cluster.byId.values()]) {
          if (waiter.owner === host) waiter.shutdown()
        }
      })
      return async () => {
        off()
        cluster.hosts.delete(host)
        await cluster.idle()
        if (cluster.hosts.size === 0) await cluster.close()
      }
    },
  }
  const createSerialize = (serializeOptions: RedisSerializeOptions = {}): Coordinator => {
    if (serializeOptions === null || typeof serializeOptions !== 'object') {
      throw new TypeError(
        'cluster.createSerialize(options): options must be an object such as { concurrency: 2 }.',
      )
    }
    assertKnownKeys('cluster.createSerialize(options)', serializeOptions, SERIALIZE_OPTIONS)
    const concurrency = serializeOptions.concurrency ?? 1
    if (typeof concurrency !== 'number' || !Number.isInteger(concurrency) || concurrency < 1) {
      throw new RangeError(
        `cluster.createSerialize({ concurrency }): concurrency must be an integer ≥ 1, got ${describe(concurrency)}.`,
      )
    }
    return clusterSerialize(cluster, concurrency, serializeOptions.name ?? 'serialize')
  }
  return Object.freeze({
    dedupe: clusterDedupe(cluster),
    restart: clusterRestart(cluster),
    serialize: clusterSerialize(cluster, 1, 'serialize'),
    exhaust: clusterExhaust(cluster),
    keepLatest: clusterKeepLatest(cluster),
    plugin,
    createSerialize,
    inspect: () => cluster.inspect(),
    counters: () => cluster.counters(),
  })
}
