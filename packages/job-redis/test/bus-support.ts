import { Cluster, Redis } from 'ioredis'
import {
  type AggregateBusConsumer,
  createRedisAggregateBus,
  type RedisAggregateBus,
  type RedisAggregateBusOptions,
} from '../src/index.js'
import { uniquePrefix } from './support.js'

/** A client of one primary or of a cluster, as the bus takes it. */
export type RedisClient = Redis | Cluster

/** A key of one partition, as the bus names it: `<prefix>:bus:{<aggregate>:<n>}:<part>` (one hash tag per partition). */
export function partitionKey(
  prefix: string,
  aggregate: string,
  partition: number,
  part: 'p' | 'own' | 'fence' | 'dead',
): string {
  return `${prefix}:bus:{${aggregate}:${partition}}:${part}`
}

/** Where a bus test runs: one primary, or a 3-primary cluster. */
export interface BusTarget {
  readonly name: string
  /** A new client of the target (closed by the setup that opened it). */
  connect(): RedisClient
  /** Every key under the prefix, on every primary. */
  keys(client: RedisClient, prefix: string): Promise<string[]>
}

/** One redis-server at `url`. */
export function onePrimary(url: string): BusTarget {
  return {
    name: 'one primary',
    connect: () => new Redis(url, { maxRetriesPerRequest: null }),
    keys: (client, prefix) => (client as Redis).keys(`${prefix}:*`),
  }
}

/** A Redis Cluster on these ports (`startRedisCluster`). */
export function onCluster(ports: readonly number[]): BusTarget {
  return {
    name: 'a 3-primary cluster',
    connect: () =>
      new Cluster(
        ports.map((port) => ({ host: '127.0.0.1', port })),
        { redisOptions: { maxRetriesPerRequest: null } },
      ),
    async keys(client, prefix) {
      const lists = await Promise.all(
        (client as Cluster).nodes('master').map((node) => node.keys(`${prefix}:*`)),
      )
      return lists.flat()
    },
  }
}

export interface BusSetup {
  readonly redis: RedisClient
  readonly bus: RedisAggregateBus
  readonly prefix: string
  /** Clients opened by this setup, closed by close(). */
  client(): RedisClient
  /** Every key under the prefix. */
  keys(): Promise<string[]>
  close(): void
}

/**
 * A bus on `target` (a URL: one primary) with a fresh prefix; 8 partitions,
 * a 600 ms lease and a 3 s bound on each round trip unless told: the short
 * lease keeps ownership tests quick, and the bound is not what these tests
 * check (a loaded machine may take longer than a lease to answer; the
 * fault tests set their own).
 */
export function busSetup(
  target: string | BusTarget,
  options: Partial<RedisAggregateBusOptions> = {},
): BusSetup {
  const where = typeof target === 'string' ? onePrimary(target) : target
  const clients: RedisClient[] = []
  const client = () => {
    const redis = where.connect()
    redis.on('error', () => {})
    clients.push(redis)
    return redis
  }
  const redis = client()
  const prefix = uniquePrefix()
  const bus = createRedisAggregateBus({
    redis,
    prefix,
    partitions: 8,
    leaseMs: 600,
    connectTimeoutMs: 3000,
    ...options,
  })
  return {
    redis,
    bus,
    prefix,
    client,
    keys: () => where.keys(redis, prefix),
    close() {
      for (const c of clients) c.disconnect()
    },
  }
}

// The bus's test helpers every engine shares.
export { type Handled, recorder, sendAll } from '@vega/distributed-tests/bus'
export type { AggregateBusConsumer }
