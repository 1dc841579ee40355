import { assertKnownKeys } from '@vega/job-core'
import {
  type Codec,
  createDistributedCoordination,
  type DistributedCoordination,
  type DistributedCounters,
  type DistributedSerializeOptions,
  describeValue,
  type LeaderContext,
  resolveCoordinationOptions,
} from '@vega/job-distributed'
import type { Redis, Cluster as RedisCluster } from 'ioredis'
import { RedisIO } from './internal/redis-io.js'

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
 * Options of {@link RedisCoordination.createSerialize}: `concurrency` (bodies
 * per key at once, cluster-wide; every process must use the same number for
 * a key) and `name` (the coordinator's name in diagnostic events).
 *
 * @example
 * ```ts
 * const uploads = cluster.createSerialize({ concurrency: 2, name: 'uploads' })
 * ```
 */
export type RedisSerializeOptions = DistributedSerializeOptions

/**
 * What {@link createRedisCoordination} returns: the five strategies, carried
 * across processes, the plugin that connects them to a runtime,
 * `createSerialize`, `inspect()` (parked calls, held leases, keys with
 * waiters) and `counters()`: the same shape as `@vega/job-postgres`'s.
 *
 * @example
 * ```ts
 * const cluster: RedisCoordination = createRedisCoordination({ redis, prefix: 'vj', leaseMs: 10_000 })
 * const runtime = createRuntime({ plugins: [installCoordination, cluster.plugin] })
 * ```
 */
export type RedisCoordination = DistributedCoordination

/**
 * What {@link RedisCoordination.counters} reports: totals since the
 * coordination was created, for this process. `floorRechecks`: how many
 * times a waiter here asked Redis again because nothing woke it within
 * leaseMs / 3 (its polling floor; grants and wake-ups come by pub/sub
 * message, the floor keeps a long wait's place in the queue alive and covers
 * a message that was lost). `floorWakeUps`: of those, the ones that found the
 * call's turn had already come, each a message this process did not hear; a
 * count that keeps growing means messages do not arrive.
 *
 * @example
 * ```ts
 * const before = cluster.counters().floorWakeUps
 * await Promise.all(calls)
 * // 0 when every grant reached its waiter by message, none on the polling floor.
 * console.log(cluster.counters().floorWakeUps - before)
 * ```
 */
export type RedisCoordinationCounters = DistributedCounters

const COORDINATION_OPTIONS = [
  'redis',
  'prefix',
  'leaseMs',
  'codec',
  'connectTimeoutMs',
  'leaderContext',
]
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
    fail(`redis must be an ioredis client (new Redis(url)), got ${describeValue(redis)}.`)
  }
  if (client.status === 'end' || client.status === 'close') {
    fail(
      `redis is a closed client (status '${client.status}'); pass an open one: quit() and disconnect() end a client for good.`,
    )
  }
  return redis as Redis | RedisCluster
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
  const { prefix } = options
  if (typeof prefix !== 'string' || prefix.trim() === '' || /\s/.test(prefix)) {
    fail(
      `prefix must be a non-empty string without whitespace (it starts every key), got ${describeValue(prefix)}.`,
    )
  }
  const { leaseMs, codec, connectTimeoutMs, leaderContext } = resolveCoordinationOptions(
    'createRedisCoordination',
    options,
  )
  const io = new RedisIO(redis, prefix, leaseMs, connectTimeoutMs)
  return createDistributedCoordination(io, { codec, leaderContext })
}
