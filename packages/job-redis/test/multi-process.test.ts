// redis.md §1, the table: each row with 2–4 forked Node processes (one
// runtime each, the built package), checked from what the bodies report;
// once on one primary, once on a Redis Cluster of three primaries.

import { describeAcrossProcesses } from '@vega/distributed-tests/processes'
import { type RedisClusterNodes, startRedisCluster } from '@vega/redis-server'
import { Cluster, Redis } from 'ioredis'
import { expect } from 'vitest'
import { startRedisServer } from './redis-server.js'
import { uniquePrefix } from './support.js'
import { startWorkers, type Worker } from './workers.js'

const LEASE = 1500

/** Where the processes coordinate, and how the test reads every node's keys there. */
interface Place {
  readonly workers: Worker[]
  /** Every key under the prefix, with its TTL (ms), on every primary. */
  keys(prefix: string): Promise<{ key: string; pttl: number }[]>
  dispose(): Promise<void>
}

async function keysOn(node: Redis, prefix: string): Promise<{ key: string; pttl: number }[]> {
  const keys = await node.keys(`${prefix}:*`)
  return Promise.all(keys.map(async (key) => ({ key, pttl: await node.pttl(key) })))
}

async function onePrimary(prefix: string): Promise<Place> {
  const server = await startRedisServer()
  const redis = new Redis(server.url)
  const workers = await startWorkers(4, { url: server.url, prefix, leaseMs: LEASE })
  return {
    workers,
    keys: (p) => keysOn(redis, p),
    async dispose() {
      redis.disconnect()
      await server.dispose()
    },
  }
}

async function threePrimaries(prefix: string): Promise<Place> {
  const nodes: RedisClusterNodes = await startRedisCluster()
  const client = new Cluster(nodes.ports.map((port) => ({ host: '127.0.0.1', port })))
  const workers = await startWorkers(4, {
    url: '',
    clusterPorts: [...nodes.ports],
    prefix,
    leaseMs: LEASE,
  })
  return {
    workers,
    async keys(p) {
      const perNode = await Promise.all(client.nodes('master').map((node) => keysOn(node, p)))
      return perNode.flat()
    },
    async dispose() {
      client.disconnect()
      await nodes.dispose()
    },
  }
}

for (const [where, start] of [
  ['one primary', onePrimary],
  ['a 3-primary Redis Cluster', threePrimaries],
] as const) {
  const prefix = uniquePrefix()
  let place: Place | undefined
  describeAcrossProcesses({
    title: `§1 across processes, on ${where}`,
    lease: LEASE,
    async start() {
      place = await start(prefix)
      return place.workers
    },
    async nothingLeft() {
      // Nothing but fence counters (and dedupe results until their lease-long TTL) remains.
      const keys = (await place?.keys(prefix)) ?? []
      expect(
        keys.map((k) => k.key).filter((k) => !k.endsWith(':fence') && !k.includes(':result:')),
      ).toEqual([])
      for (const { pttl } of keys) expect(pttl).toBeGreaterThan(0)
      await place?.dispose()
    },
  })
}
