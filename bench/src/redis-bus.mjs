// Redis scenario 3: messages per second end to end through the aggregate bus
// against BullMQ's queue, with 1, 2 and 4 consumer processes on the bench's
// own redis-server, and the bus with 1, 2 and 4 consumers on a 3-primary
// Redis Cluster of its own (redis-server.mjs). The bench process sends (512 in flight, ids round-robin);
// the consumers — forked once per peer and kept across rounds, so a round
// times sending and handling, not forking or joining — run the same handler.
// BullMQ's open edition has no per-group order: the price of the bus's order
// is what this measures. Its reordering per id is reported, not verified.

import { fileURLToPath } from 'node:url'
import { createRedisAggregateBus } from '@vega/job-redis'
import { Queue } from 'bullmq'
import { Cluster, Redis } from 'ioredis'
import { consumerProcesses, sendRound } from './distributed.mjs'
import { check } from './harness.mjs'
import { clusterNodes, redisUrl } from './redis-server.mjs'

// The server starts when the scenario loads, so no timed run pays for it.
await redisUrl()

const CHILD = fileURLToPath(new URL('./redis-bus-child.mjs', import.meta.url))
const PARTITIONS = 64
const PARALLELISM = 16
const IDS = 1000
const WINDOW = 512
const pools = new Map()
process.on('exit', () => {
  for (const pool of pools.values()) for (const child of pool.children) child.kill('SIGKILL')
})

/** k consumer processes of one peer, started on first use and kept. */
async function pool(peer, k) {
  const key = `${peer}-${k}`
  let found = pools.get(key)
  if (found !== undefined) return found
  const url = await redisUrl()
  const nodes = peer === 'bus-cluster' ? await clusterNodes() : undefined
  const name = `bench-${key}`
  const { children, counts, until } = await consumerProcesses(CHILD, k, () => ({
    url,
    nodes,
    peer,
    name,
    partitions: PARTITIONS,
    parallelism: PARALLELISM,
  }))
  const redis =
    nodes === undefined
      ? new Redis(url, { maxRetriesPerRequest: null })
      : new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: null } })
  let send
  if (peer.startsWith('bus')) {
    // Joined and spread before the first round: a round measures the steady state.
    await until(() => counts.reduce((sum, c) => sum + c.owned, 0) === PARTITIONS)
    const bus = createRedisAggregateBus({
      redis,
      prefix: name,
      partitions: PARTITIONS,
      leaseMs: 10_000,
    })
    send = (id, seq) => bus.send({ aggregate: 'bench.Order', id, body: { id, seq } })
  } else {
    const queue = new Queue(name, { connection: redis })
    const options = { removeOnComplete: true, removeOnFail: true }
    send = (id, seq) => queue.add('m', { id, seq }, options)
  }
  found = { children, counts, until, send, seq: 0, close: () => redis.disconnect() }
  pools.set(key, found)
  return found
}

async function endToEnd(peer, k, n) {
  return sendRound(await pool(peer, k), n, { ids: IDS, window: WINDOW })
}

const peers = []
for (const k of [1, 2, 4]) {
  peers.push({
    name: `BullMQ 6.7.0, ${k} worker${k > 1 ? 's' : ''}`,
    baseline: k === 1,
    run: (n) => endToEnd('bullmq', k, n),
  })
  peers.push({
    name: `job-redis bus, ${k} consumer${k > 1 ? 's' : ''}`,
    run: (n) => endToEnd('bus', k, n),
  })
  peers.push({
    name: `job-redis bus on a 3-primary cluster, ${k} consumer${k > 1 ? 's' : ''}`,
    run: (n) => endToEnd('bus-cluster', k, n),
  })
}

export default {
  id: 'redis-bus',
  title: `messages end to end (send → handled) over ${IDS} ids, ${PARALLELISM} in flight per consumer process, ${PARTITIONS} partitions; consumers forked once and kept across rounds`,
  size: { full: 20_000, quick: 2_000 },
  target: 'the bus with 4 consumers at least as fast as BullMQ with 4 workers',
  peers,
  verify(peer, result) {
    check(result.handled === result.sent, `${result.handled} handled, expected ${result.sent}`)
    if (peer.startsWith('job-redis')) {
      check(result.outOfOrder === 0, `${result.outOfOrder} messages handled out of order per id`)
    }
  },
  checks: [1, 2, 4].flatMap((k) => [
    {
      label: `bus vs BullMQ, ${k} consumer process${k > 1 ? 'es' : ''}`,
      subject: `job-redis bus, ${k} consumer${k > 1 ? 's' : ''}`,
      kind: 'relative',
      to: `BullMQ 6.7.0, ${k} worker${k > 1 ? 's' : ''}`,
      max: k === 4 ? 1 : undefined,
    },
    {
      label: `bus on a 3-primary cluster vs on one primary, ${k} consumer process${k > 1 ? 'es' : ''}`,
      subject: `job-redis bus on a 3-primary cluster, ${k} consumer${k > 1 ? 's' : ''}`,
      kind: 'relative',
      to: `job-redis bus, ${k} consumer${k > 1 ? 's' : ''}`,
    },
  ]),
  async extra() {
    // How far BullMQ reordered each id (not a failure: it promises no order per id).
    const metrics = {}
    for (const [key, p] of pools) {
      metrics[`outOfOrder ${key}`] = p.counts.reduce((sum, c) => sum + c.outOfOrder, 0)
      for (const child of p.children) child.send({ t: 'stop' })
      p.close()
    }
    return { metrics }
  },
}
