// Compares the uncontended Redis call of two (or more) builds in one process,
// on one redis-server: the `redis-overhead` workload, side by side.
//   node --expose-gc src/redis-overhead-builds.mjs <checkout A> <checkout B> [--only dedupe,restart,…] [--rounds N] [--n N] [--collect]
//
// Each checkout must be built; its job-core, job-coordination and job-redis
// are imported from `<checkout>/packages/<name>/dist/index.js` (each build
// with the packages of its own checkout), so both builds live side by side.
// A run is timed as the scenario times it: client, coordination and runtime
// made, the calls, shutdown. The rounds and the report are
// `overhead-builds.mjs`'s. `--collect` matters here: a full collection
// before every run, as the bench's harness does, costs the strategies far
// more than the hand lease (see the bench's README).

import { startRedisServer } from '@vega/redis-server'
import { Redis } from 'ioredis'
import { compareOverheadBuilds } from './overhead-builds.mjs'
import { handClient, handLease } from './redis-server.mjs'

let runs = 0

await compareOverheadBuilds({
  script: 'redis-overhead-builds.mjs',
  engine: 'job-redis',
  async start() {
    const server = await startRedisServer({
      who: 'redis-overhead-builds',
      folderPrefix: 'vega-bench-redis-',
      unref: true,
    })
    process.on('exit', () => server.killNow())
    return server.url
  },
  /** The lower bound: SET NX PX to take, a Lua compare-and-delete (by SHA) to give back. */
  hand(url, n, timed) {
    return timed(n, async () => {
      const redis = handClient(url)
      const key = `builds-hand-${++runs}`
      for (let i = 1; i <= n; i++) await handLease(redis, key, i)
      redis.disconnect()
    })
  },
  async strategyRun(build, strategy, url, n, timed) {
    let sum = 0
    const timing = await timed(n, async () => {
      const redis = new Redis(url)
      const coordination = build.engine.createRedisCoordination({
        redis,
        prefix: `builds-${++runs}`,
        leaseMs: 10_000,
      })
      const runtime = build.core.createRuntime({
        plugins: [build.coordination.installCoordination, coordination.plugin],
      })
      const fn = build.coordination.withCoordinator((ctx) => ctx.taskId, coordination[strategy], {
        key: 'k',
      })
      for (let i = 0; i < n; i++) sum += await build.core.run(runtime, fn)
      await build.core.shutdown(runtime)
      redis.disconnect()
    })
    if (sum !== (n * (n + 1)) / 2) throw new Error(`${build.name} ${strategy}: wrong values`)
    return timing
  },
})
process.exit(0)
