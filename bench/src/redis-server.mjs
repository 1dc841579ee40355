// The redis scenarios' own redis-server: a free loopback port, persistence
// off, a temporary folder; killed when the bench process exits.

import { startRedisServer } from '@vega/redis-server'

let shared

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

/** The lower bound: a hand-written lease, acquire with SET NX PX and release with a compare-and-delete script. */
export const HAND_RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`
