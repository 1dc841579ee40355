// The faults: a holder killed or paused (on one primary, and
// on a Redis Cluster of three primaries), Redis restarted or paused, and what
// is left in Redis afterwards.

import { gatedHolder } from '@vega/distributed-tests'
import { describeHolderFaults } from '@vega/distributed-tests/processes'
import { withCoordinator } from '@vega/job-coordination'
import { run, settle, shutdown, type TaskContext } from '@vega/job-core'
import { type RedisClusterNodes, startRedisCluster } from '@vega/redis-server'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertLease, fencingToken, LeaseLostError, RedisUnavailableError } from '../src/index.js'
import { type RedisServer, startRedisServer } from './redis-server.js'
import { eventually, type Setup, setup, uniquePrefix } from './support.js'
import { startWorkers, type Worker } from './workers.js'

const LEASE = 1000
const WAIT = 30 * LEASE

let server: RedisServer
let admin: Redis
const spawned: Worker[] = []
const opened: Setup[] = []
beforeAll(async () => {
  server = await startRedisServer()
  admin = new Redis(server.url, { maxRetriesPerRequest: null })
  admin.on('error', () => {})
})
afterAll(async () => {
  for (const worker of spawned) {
    if (worker.child.exitCode === null && worker.child.signalCode === null) worker.kill('SIGKILL')
  }
  for (const { redis } of opened) redis.disconnect()
  admin?.disconnect()
  await server?.dispose()
})

/** Where the worker processes coordinate: the file's server, or a Redis Cluster of three primaries. */
type Place = 'one primary' | 'a 3-primary Redis Cluster'

for (const where of ['one primary', 'a 3-primary Redis Cluster'] as Place[]) {
  describe(`a holder that dies or stops, on ${where}`, () => {
    let nodes: RedisClusterNodes | undefined
    beforeAll(async () => {
      if (where !== 'one primary') nodes = await startRedisCluster()
    })
    afterAll(async () => {
      for (const worker of spawned) {
        if (worker.child.exitCode === null && worker.child.signalCode === null)
          worker.kill('SIGKILL')
      }
      await nodes?.dispose()
    })

    async function workersOn(count: number, prefix: string): Promise<Worker[]> {
      const workers = await startWorkers(count, {
        url: server.url,
        ...(nodes === undefined ? {} : { clusterPorts: [...nodes.ports] }),
        prefix,
        leaseMs: LEASE,
      })
      spawned.push(...workers)
      return workers
    }

    describeHolderFaults({
      title: 'the holder',
      lease: LEASE,
      workersOn: (count) => workersOn(count, uniquePrefix()),
    })
  })
}

describe('Redis itself', () => {
  function fresh(options: Parameters<typeof setup>[1] = {}): Setup {
    const value = setup(server.url, { leaseMs: 3 * LEASE, connectTimeoutMs: 600, ...options })
    opened.push(value)
    return value
  }

  it('CLIENT PAUSE past connectTimeoutMs: the call ends in error with RedisUnavailableError; nothing hangs or stays; then it recovers', async () => {
    const s = fresh()
    // Warm: scripts loaded, connection up.
    expect(
      await run(
        s.runtime,
        withCoordinator(async () => 'warm', s.cluster.serialize, { key: 'p' }),
      ),
    ).toBe('warm')
    let ran = false
    await admin.call('CLIENT', 'PAUSE', '2500', 'ALL')
    const task = run(
      s.runtime,
      withCoordinator(
        async () => {
          ran = true
        },
        s.cluster.serialize,
        { key: 'p' },
      ),
    )
    const outcome = await settle(task)
    expect(outcome.status).toBe('error')
    const error = (outcome as { error: unknown }).error
    expect(error).toBeInstanceOf(RedisUnavailableError)
    expect((error as Error).message).toMatch(/did not answer within connectTimeoutMs \(600 ms\)/)
    expect(ran).toBe(false)
    expect(s.cluster.inspect()).toEqual({ waiters: 0, leases: 0, keys: 0 })
    // The paused acquire runs when the pause ends and is granted to nobody: it is given back.
    await new Promise((resolve) => setTimeout(resolve, 2600))
    expect(await s.redis.keys(`${s.prefix}:*:lock`)).toEqual([])
    expect(
      await run(
        s.runtime,
        withCoordinator(async () => 'back', s.cluster.serialize, { key: 'p' }),
      ),
    ).toBe('back')
    await shutdown(s.runtime)
    expect(await s.redis.keys(`${s.prefix}:*:lock`)).toEqual([])
  })

  it('the connection drops while a grant waits in Redis: ioredis sends it again on a new connection, and its token still names the server (assertLease accepts it)', async () => {
    const s = fresh({ connectTimeoutMs: 10_000 })
    const serverRunId = /run_id:(\w+)/.exec(await admin.info('server'))?.[1]
    const token = (key: string) =>
      run(
        s.runtime,
        withCoordinator(
          async (ctx) => {
            await assertLease(ctx)
            return fencingToken(ctx)
          },
          s.cluster.serialize,
          { key },
        ),
      )
    // Warm: the run_id of this connection is known, so the next grant does not ask for it.
    expect((await token('c')).runId).toBe(serverRunId)
    await admin.call('CONFIG', 'RESETSTAT')
    expect((await token('c')).runId).toBe(serverRunId)
    // One INFO: assertLease's own check; the grant did not ask.
    expect(await admin.info('commandstats')).toMatch(/cmdstat_info:calls=1,/)
    const clientId = await s.redis.client('ID')
    await admin.call('CLIENT', 'PAUSE', '10000', 'WRITE') // holds the grant's script, not CLIENT KILL
    const pending = token('c')
    await new Promise((resolve) => setTimeout(resolve, 200))
    // ioredis sends the unanswered script again when the new connection is ready, before this listener runs.
    const reconnected = new Promise((resolve) => s.redis.once('ready', resolve))
    await admin.call('CLIENT', 'KILL', 'ID', String(clientId))
    await reconnected
    await admin.call('CLIENT', 'UNPAUSE')
    const resent = await pending
    expect(resent.runId).toBe(serverRunId)
    await shutdown(s.runtime)
    expect(s.cluster.inspect()).toEqual({ waiters: 0, leases: 0, keys: 0 })
  })

  it('redis-server restarted mid-run: the holder loses its lease, calls while it is down fail clearly, old tokens are refused, new ones are larger', async () => {
    const s = fresh()
    const { holder, context, release } = gatedHolder({
      runtime: s.runtime,
      serialize: s.cluster.serialize,
      key: 'r',
      fencingToken,
      assertLease,
    })
    await eventually(() => context() !== undefined, WAIT, 'the holder started')
    const before = await fencingToken(context() as TaskContext)
    await server.stop()
    const whileDown = run(
      s.runtime,
      withCoordinator(async () => 'never', s.cluster.exhaust, { key: 'other' }),
    )
    const downOutcome = await settle(whileDown)
    expect(downOutcome.status).toBe('error')
    expect((downOutcome as { error: unknown }).error).toBeInstanceOf(RedisUnavailableError)
    await server.start()
    release()
    const outcome = await settle(holder)
    expect(outcome.status).toBe('error')
    expect((outcome as { error: unknown }).error).toBeInstanceOf(LeaseLostError)
    // A new grant on the new server: another run_id, a larger fence (seeded from the server clock).
    const after = await eventuallyRun(s)
    expect(after.runId).not.toBe(before.runId)
    expect(after.fence).toBeGreaterThan(before.fence)
    await shutdown(s.runtime)
    expect(s.cluster.inspect()).toEqual({ waiters: 0, leases: 0, keys: 0 })
  })

  it('after everything settled, only fence counters remain, each with a TTL', async () => {
    await new Promise((resolve) => setTimeout(resolve, 3 * LEASE + 200))
    const keys = await admin.keys('*')
    expect(keys.length).toBeGreaterThan(0)
    expect(keys.filter((key) => !key.endsWith(':fence'))).toEqual([])
    for (const key of keys) {
      const ttl = await admin.pttl(key)
      expect(ttl).toBeGreaterThan(60 * 60 * 1000)
    }
  })
})

/** The first grant after a restart may race the client's reconnection: try a few times. */
async function eventuallyRun(s: Setup): Promise<{ fence: number; runId: string }> {
  for (let attempt = 0; ; attempt++) {
    const task = run(
      s.runtime,
      withCoordinator(async (ctx) => fencingToken(ctx), s.cluster.serialize, { key: 'r' }),
    )
    const outcome = await settle(task)
    if (outcome.status === 'success') return outcome.value as { fence: number; runId: string }
    if (attempt > 20) throw (outcome as { error: unknown }).error
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}
