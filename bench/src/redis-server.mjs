// The redis scenarios' own redis-server (a free loopback port, persistence
// off, a temporary folder) and, for the bus's cluster rows, a 3-primary Redis
// Cluster: each started once, when first asked for, and killed when the bench
// process exits.

import { startRedisCluster, startRedisServer } from '@vega/redis-server'
import { Redis } from 'ioredis'

let shared
let sharedCluster

/** Starts (once per bench process) a redis-server and resolves with its URL. */
export function redisUrl() {
  shared ??= start()
  return shared
}

async function start() {
  const server = await startRedisServer({
    who: 'the redis scenarios',
    folderPrefix: 'vega-bench-redis-',
    unref: true,
  })
  process.on('exit', () => server.killNow())
  return server.url
}

/** Starts (once per bench process) a 3-primary cluster; resolves with its primaries ({ host, port }). */
export function clusterNodes() {
  sharedCluster ??= startCluster()
  return sharedCluster
}

async function startCluster() {
  const cluster = await startRedisCluster({
    who: "the redis-bus scenario's cluster rows",
    unref: true,
  })
  process.on('exit', () => cluster.killNow())
  return cluster.nodes
}

/** The lower bound: a hand-written lease, acquire with SET NX PX and release with a compare-and-delete script. */
export const HAND_RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`

/** A client that sends HAND_RELEASE by SHA (`handRelease`), as the package sends its scripts. */
export function handClient(url) {
  const redis = new Redis(url)
  redis.defineCommand('handRelease', { numberOfKeys: 1, lua: HAND_RELEASE })
  return redis
}

/** The hand lease taken and given back once, as call `i`, on a {@link handClient}; resolves with `i`. */
export async function handLease(redis, key, i) {
  const token = String(i)
  const taken = await redis.set(key, token, 'PX', 10_000, 'NX')
  if (taken !== 'OK') throw new Error('the hand lease was not free')
  await redis.handRelease(key, token)
  return i
}
