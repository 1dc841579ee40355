// A consumer process of the redis-bus scenario: one @vega/job-redis bus
// consumer (on one primary or on a 3-primary cluster) or one BullMQ worker,
// alive across rounds, with the handler every peer shares (see
// serveConsumer in distributed.mjs).

import { createRedisAggregateBus } from '@vega/job-redis'
import { Worker } from 'bullmq'
import { Cluster, Redis } from 'ioredis'
import { serveConsumer } from './distributed.mjs'

serveConsumer(async ({ url, nodes, peer, name, partitions, parallelism }, handler) => {
  // `nodes`: the bus on the bench's 3-primary cluster.
  const redis =
    nodes === undefined
      ? new Redis(url, { maxRetriesPerRequest: null })
      : new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: null } })
  if (peer.startsWith('bus')) {
    const bus = createRedisAggregateBus({ redis, prefix: name, partitions, leaseMs: 10_000 })
    const consumer = bus.consume('bench.Order', (d) => handler(d.id, d.body.seq), { parallelism })
    return {
      owned: () => consumer.owned().length,
      async stop() {
        await consumer.stop({ mode: 'handover', deadline: 1000 })
        redis.disconnect()
      },
    }
  }
  const worker = new Worker(name, (job) => handler(job.data.id, job.data.seq), {
    connection: redis,
    concurrency: parallelism,
  })
  await worker.waitUntilReady()
  return {
    async stop() {
      await worker.close()
      redis.disconnect()
    },
  }
})
