// One process of the bus's multi-process tests on the BUILT package (dist):
// the producer or consumer is @vega/distributed-tests' serveBusWorker; this
// child only says how to reach Redis.

import { serveBusWorker } from '@vega/distributed-tests/bus-worker-child'
import { Cluster, Redis } from 'ioredis'
import { createRedisAggregateBus } from '../../dist/index.js'

serveBusWorker({
  async connect(init) {
    // `cluster`: the ports of a Redis Cluster's nodes; else one primary at `url`.
    const redis =
      init.cluster === undefined
        ? new Redis(init.url, { maxRetriesPerRequest: null })
        : new Cluster(
            init.cluster.map((port) => ({ host: '127.0.0.1', port })),
            { redisOptions: { maxRetriesPerRequest: null } },
          )
    redis.on('error', () => {})
    const bus = createRedisAggregateBus({
      redis,
      prefix: init.prefix,
      partitions: init.partitions,
      leaseMs: init.leaseMs,
    })
    await redis.ping()
    return { bus, close: () => redis.disconnect() }
  },
})
