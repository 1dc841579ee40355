// Redis scenario 1: the per-call overhead of each cross-process strategy,
// uncontended: N calls one after another (each awaited), one key, on the
// bench's own redis-server. Lower bound: a hand-written lease — SET NX PX to
// take it, a Lua compare-and-delete to give it back (two round trips).

import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, run, shutdown } from '@vega/job-core'
import { createRedisCoordination } from '@vega/job-redis'
import { Redis } from 'ioredis'
import { handCalls, overheadChecks } from './distributed.mjs'
import { handClient, handLease, redisUrl } from './redis-server.mjs'

// The server starts when the scenario loads, so no timed run pays for it.
await redisUrl()

const HAND = 'hand SET NX PX + Lua DEL'
const FLOOR = 'floor: the hand lease in a job-core task per call'
const STRATEGIES = ['dedupe', 'restart', 'serialize', 'exhaust', 'keepLatest']
let rounds = 0

/**
 * `n` hand leases one after another; with `inTasks`, each inside a job-core
 * task (the floor row: what a task per call adds, with no coordination).
 */
async function handRun(n, { inTasks }) {
  const redis = handClient(await redisUrl())
  const key = `bench-hand-${inTasks ? 'task-' : ''}${++rounds}`
  const sum = await handCalls(n, { inTasks }, (i) => handLease(redis, key, i))
  const left = await redis.exists(key)
  redis.disconnect()
  return { calls: n, sum, expected: (n * (n + 1)) / 2, left }
}

/** One client, cluster and runtime per run: the run ends with shutdown, so nothing is left over. */
async function strategyRun(strategy, n) {
  const redis = new Redis(await redisUrl())
  const prefix = `bench-${strategy}-${++rounds}`
  const cluster = createRedisCoordination({ redis, prefix, leaseMs: 10_000 })
  const runtime = createRuntime({ plugins: [installCoordination, cluster.plugin] })
  const fn = withCoordinator((ctx) => ctx.taskId, cluster[strategy], { key: 'k' })
  let sum = 0
  for (let i = 0; i < n; i++) sum += await run(runtime, fn)
  await shutdown(runtime)
  // A key with one slot keeps its holder in `…:lock`, one with more in `…:hold`.
  const left = [
    ...(await redis.keys(`${prefix}:*:lock`)),
    ...(await redis.keys(`${prefix}:*:hold`)),
  ]
  redis.disconnect()
  return { calls: n, sum, expected: (n * (n + 1)) / 2, left: left.length }
}

export default {
  id: 'redis-overhead',
  title: 'uncontended calls one after another on a local redis-server, per strategy',
  size: { full: 2_000, quick: 50 },
  target: 'each strategy ≤ 1.5× the hand SET NX PX + DEL',
  peers: [
    {
      name: HAND,
      baseline: true,
      run: (n) => handRun(n, { inTasks: false }),
    },
    {
      name: FLOOR,
      info: true,
      run: (n) => handRun(n, { inTasks: true }),
    },
    ...STRATEGIES.map((strategy) => ({
      name: `job-redis ${strategy}`,
      run: (n) => strategyRun(strategy, n),
    })),
  ],
  ...overheadChecks({
    engine: 'job-redis',
    strategies: STRATEGIES,
    hand: HAND,
    floor: FLOOR,
    left: 'lease key(s) left in Redis after the run',
  }),
}
