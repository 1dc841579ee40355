// A worker process of the contended redis scenario: `calls` calls on one key,
// all issued at once, either through job-redis serialize or through the hand
// lease with a retry loop; reports the bodies' intervals to the parent.

import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, run, shutdown } from '@vega/job-core'
import { createRedisCoordination } from '@vega/job-redis'
import { Redis } from 'ioredis'
import { serveContended } from './distributed.mjs'
import { HAND_RELEASE } from './redis-server.mjs'

serveContended(async ({ url, prefix, peer, calls }, body) => {
  const redis = new Redis(url)
  await redis.ping()
  const close = () => redis.disconnect()
  if (peer === 'job-redis') {
    const runAll = async () => {
      const cluster = createRedisCoordination({ redis, prefix, leaseMs: 10_000 })
      const runtime = createRuntime({ plugins: [installCoordination, cluster.plugin] })
      const fn = withCoordinator(body, cluster.serialize, { key: 'k' })
      await Promise.all(Array.from({ length: calls }, () => run(runtime, fn)))
      await shutdown(runtime)
    }
    return { run: runAll, close }
  }
  redis.defineCommand('handRelease', { numberOfKeys: 1, lua: HAND_RELEASE })
  const key = `${prefix}:hand`
  let next = 0
  // A spin lock: retry SET NX every millisecond, as hand-written locks usually do.
  const one = async () => {
    const token = `${process.pid}-${++next}`
    while ((await redis.set(key, token, 'PX', 10_000, 'NX')) !== 'OK') {
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    try {
      await body()
    } finally {
      await redis.handRelease(key, token)
    }
  }
  return { run: () => Promise.all(Array.from({ length: calls }, one)), close }
})
