// One process of the bus's multi-process tests: a producer or a consumer of
// 'sales.Order' on the BUILT package (dist), driven over IPC. Handlers log
// every entry and exit with writeSync (a SIGKILL loses no line), stamped with
// the system-wide monotonic clock every process on the machine shares.

import { openSync, writeSync } from 'node:fs'
import { Cluster, Redis } from 'ioredis'
import { createRedisAggregateBus } from '../../dist/index.js'

const now = () => Number(process.hrtime.bigint()) / 1e6
const send = (message) => process.send?.(message)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

let redis
let bus
let consumer
let log
let handled = 0
let slow = new Map()
let handlerMs = 0

async function handle(delivery) {
  const { id, body, attempt, fence } = delivery
  writeSync(log, `E ${id} ${body.seq} ${attempt} ${fence} ${now()}\n`)
  const ms = slow.get(id) ?? handlerMs
  if (ms > 0) await sleep(ms)
  else await new Promise((resolve) => setImmediate(resolve))
  writeSync(log, `X ${id} ${body.seq} ${attempt} ${fence} ${now()}\n`)
  handled++
}

process.on('message', async (message) => {
  if (message.cmd === 'init') {
    // `cluster`: the ports of a Redis Cluster's nodes; else one primary at `url`.
    redis =
      message.cluster === undefined
        ? new Redis(message.url, { maxRetriesPerRequest: null })
        : new Cluster(
            message.cluster.map((port) => ({ host: '127.0.0.1', port })),
            { redisOptions: { maxRetriesPerRequest: null } },
          )
    redis.on('error', () => {})
    bus = createRedisAggregateBus({
      redis,
      prefix: message.prefix,
      partitions: message.partitions,
      leaseMs: message.leaseMs,
    })
    if (message.log) log = openSync(message.log, 'a')
    await redis.ping()
    send({ t: 'ready', pid: process.pid })
  } else if (message.cmd === 'consume') {
    handlerMs = message.handlerMs ?? 0
    slow = new Map(Object.entries(message.slow ?? {}))
    consumer = bus.consume('sales.Order', handle, { parallelism: message.parallelism ?? 16 })
    send({ t: 'consuming', id: consumer.id, at: now() })
    setInterval(() => send({ t: 'progress', handled, owned: consumer.owned(), at: now() }), 50)
  } else if (message.cmd === 'produce') {
    const { ids, perId } = message
    for (let seq = 1; seq <= perId; seq++) {
      await Promise.all(ids.map((id) => bus.send({ aggregate: 'sales.Order', id, body: { seq } })))
      if (seq % 5 === 0) send({ t: 'sent', count: seq * ids.length })
    }
    send({ t: 'produced', count: perId * ids.length })
  } else if (message.cmd === 'stats') {
    send({ t: 'stats', stats: await consumer.stats(), owned: consumer.owned() })
  } else if (message.cmd === 'stop') {
    const report = consumer ? await consumer.stop({ mode: message.mode ?? 'drain' }) : undefined
    send({ t: 'stopped', report })
    redis.disconnect()
    process.exit(0)
  }
})
