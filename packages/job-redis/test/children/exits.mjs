// A process that installs the cluster's plugin, makes no call, and closes its
// client without shutting the runtime down: it must still exit (the pub/sub
// duplicate neither keeps it alive nor reconnects forever).

import { installCoordination } from '@vega/job-coordination'
import { createRuntime } from '@vega/job-core'
import { Redis } from 'ioredis'
import { createRedisCoordination } from '../../dist/index.js'

const redis = new Redis(process.argv[2], { lazyConnect: true })
redis.on('error', () => {})
const cluster = createRedisCoordination({ redis, prefix: 'exits', leaseMs: 1000 })
createRuntime({ plugins: [installCoordination, cluster.plugin] })
setTimeout(() => redis.disconnect(), 200)
