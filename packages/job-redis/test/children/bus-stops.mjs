// A consumer that handles one message, stops, and closes its client: after
// stop() resolved and disconnect(), no timer of the package may hold the
// process (its connectTimeoutMs and leaseMs are far longer than the test waits).

import { Redis } from 'ioredis'
import { createRedisAggregateBus } from '../../dist/index.js'

const redis = new Redis(process.argv[2], { maxRetriesPerRequest: null })
redis.on('error', () => {})
const bus = createRedisAggregateBus({
  redis,
  prefix: `stops${process.pid}`,
  partitions: 4,
  leaseMs: 60_000,
  connectTimeoutMs: 60_000,
})
let handled
const done = new Promise((resolve) => {
  handled = resolve
})
const consumer = bus.consume('sales.Order', async () => handled())
await bus.send({ aggregate: 'sales.Order', id: 'order-1', body: { n: 1 } })
await done
await consumer.stop()
redis.disconnect()
process.stdout.write('stopped')
