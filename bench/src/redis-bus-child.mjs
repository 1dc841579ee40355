// A consumer process of the redis-bus scenario: one @vega/job-redis bus
// consumer (on one primary or on a 3-primary cluster) or one BullMQ worker, alive across rounds, with the same handler
// (it counts itself and checks that each id's sequence only grows). Reports
// its count to the parent at most every 10 ms while it changes.

import { createRedisAggregateBus } from '@vega/job-redis'
import { Worker } from 'bullmq'
import { Cluster, Redis } from 'ioredis'

let handled = 0
let reported = -1
let outOfOrder = 0
const last = new Map()
const tell = (message) => {
  if (process.connected) process.send(message)
}

// The same handler for both peers: count, check the id's order, yield once.
async function handler(id, seq) {
  if ((last.get(id) ?? 0) > seq) outOfOrder++
  last.set(id, seq)
  await null
  handled++
}

process.once('message', async ({ url, nodes, peer, name, partitions, parallelism }) => {
  // `nodes`: the bus on the bench's 3-primary cluster.
  const redis =
    nodes === undefined
      ? new Redis(url, { maxRetriesPerRequest: null })
      : new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: null } })
  let stop
  let ownedTimer
  if (peer.startsWith('bus')) {
    const bus = createRedisAggregateBus({ redis, prefix: name, partitions, leaseMs: 10_000 })
    const consumer = bus.consume('bench.Order', (d) => handler(d.id, d.body.seq), { parallelism })
    ownedTimer = setInterval(() => tell({ t: 'owned', owned: consumer.owned().length }), 20)
    stop = () => consumer.stop({ mode: 'handover', deadline: 1000 })
  } else {
    const worker = new Worker(name, (job) => handler(job.data.id, job.data.seq), {
      connection: redis,
      concurrency: parallelism,
    })
    await worker.waitUntilReady()
    stop = () => worker.close()
  }
  const timer = setInterval(() => {
    if (handled === reported) return
    reported = handled
    tell({ t: 'count', handled, outOfOrder })
  }, 10)
  tell({ t: 'ready' })
  process.on('message', async (message) => {
    if (message.t !== 'stop') return
    clearInterval(timer)
    clearInterval(ownedTimer)
    await stop()
    redis.disconnect()
    process.disconnect()
  })
})
