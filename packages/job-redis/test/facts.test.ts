// The local strategies' facts with every call in one process (the table
// every engine shares, from @vega/distributed-tests), then what is Redis's
// own: round trips per call, and writes gathered per tick.

import { describeFactsInOneProcess } from '@vega/distributed-tests'
import { withCoordinator } from '@vega/job-coordination'
import { run, shutdown } from '@vega/job-core'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fencingToken } from '../src/index.js'
import { type RedisServer, startRedisServer } from './redis-server.js'
import { type Setup, setup } from './support.js'

let server: RedisServer
const opened: Setup[] = []
beforeAll(async () => {
  server = await startRedisServer()
})
afterAll(async () => {
  for (const { redis } of opened) redis.disconnect()
  await server?.dispose()
})

function fresh(): Setup {
  const value = setup(server.url)
  opened.push(value)
  return value
}

/** After shutdown (which waits for the releases), no holder or queue of the key is left. */
async function noHoldersLeft(value: Setup): Promise<void> {
  await shutdown(value.runtime)
  const keys = await value.redis.keys(`${value.prefix}:*`)
  expect(keys.filter((key) => /:(lock|hold|queue)$/.test(key))).toEqual([])
  expect(keys).toContain(`${value.prefix}:{"k"}:fence`)
  expect(value.cluster.inspect()).toEqual({ waiters: 0, leases: 0, keys: 0 })
}

describeFactsInOneProcess({
  engine: 'Redis',
  fresh: () => {
    const value = fresh()
    return { ...value, coordination: value.cluster }
  },
  noHoldersLeft,
})

describe('one caller, one call after another', () => {
  for (const strategy of ['dedupe', 'restart', 'serialize', 'exhaust', 'keepLatest'] as const) {
    it(`${strategy}: each awaited call runs its own body, from the very first (scripts not loaded yet)`, async () => {
      const s = fresh()
      const fn = withCoordinator((ctx) => ctx.taskId, s.cluster[strategy], { key: 'seq' })
      for (let i = 1; i <= 20; i++) {
        const task = run(s.runtime, fn)
        expect(await task).toBe(task.id)
        expect(task.state).toBe('success')
      }
      await shutdown(s.runtime)
    })
  }
})

describe('round trips of an uncontended call (the README’s table)', () => {
  /** Counts the scripts the client sends (EVALSHA, or EVAL on a first load), passing each through. */
  function countScripts(s: Setup): () => number {
    let count = 0
    const client = s.redis as unknown as Record<string, (...args: unknown[]) => unknown>
    for (const method of ['evalsha', 'eval']) {
      const original = client[method]!.bind(s.redis)
      client[method] = (...args: unknown[]) => {
        if (method === 'evalsha') count++
        return original(...args)
      }
    }
    return () => count
  }

  for (const strategy of ['dedupe', 'restart', 'serialize', 'exhaust', 'keepLatest'] as const) {
    it(`${strategy}: one to grant, one to release`, async () => {
      const s = fresh()
      const sent = countScripts(s)
      const once = () =>
        run(
          s.runtime,
          withCoordinator(async () => 'v', s.cluster[strategy], { key: 'rt' }),
        )
      expect(await once()).toBe('v') // loads the scripts
      await shutdown(s.runtime)
      const s2 = setup(server.url, { redis: s.redis })
      opened.push(s2)
      const before = sent()
      const task = run(
        s2.runtime,
        withCoordinator(async () => 'v', s2.cluster[strategy], { key: 'rt' }),
      )
      expect(await task).toBe('v')
      await shutdown(s2.runtime) // waits for the release
      expect(sent() - before).toBe(2)
    })
  }

  /** The reads the server made from its clients so far (one per packet or batch it found waiting). */
  async function serverReads(admin: Setup['redis']): Promise<number> {
    const stats = await admin.info('stats')
    return Number(/total_reads_processed:(\d+)/.exec(stats)?.[1])
  }

  for (const strategy of ['dedupe', 'restart', 'serialize', 'exhaust', 'keepLatest'] as const) {
    it(`${strategy}: a release leaves with the caller's next call, in one read of the server`, async () => {
      const s = fresh()
      const admin = new Redis(server.url)
      const call = withCoordinator(async () => 'v', s.cluster[strategy], { key: 'batched' })
      expect(await run(s.runtime, call)).toBe('v') // loads the scripts (and, for restart, subscribes)
      await s.redis.ping() // the first release is answered
      const calls = 40
      const before = await serverReads(admin)
      for (let i = 0; i < calls; i++) expect(await run(s.runtime, call)).toBe('v')
      await shutdown(s.runtime) // waits for the last release
      // Each call's grant went out with the release before it (the first with nothing), then the
      // last release alone and this INFO: 42 reads, where two per call would be 81. The counter
      // is the server's, so a little room is left for another connection of the process (the
      // subscriber's, connecting).
      expect((await serverReads(admin)) - before).toBeLessThanOrEqual(calls + 6)
      admin.disconnect()
    })
  }

  it("restart calls sent before the client is connected ask for the server's run_id once, and every token names it", async () => {
    const admin = new Redis(server.url)
    const runId = /run_id:(\w+)/.exec(await admin.info('server'))?.[1]
    await admin.call('CONFIG', 'RESETSTAT')
    const s = fresh()
    expect(s.redis.status).not.toBe('ready') // so every grant waits in ioredis's offline queue
    const calls = Array.from({ length: 20 }, (_, i) =>
      run(
        s.runtime,
        withCoordinator(async (ctx) => (await fencingToken(ctx)).runId, s.cluster.restart, {
          key: ['offline', i],
        }),
      ),
    )
    expect(await Promise.all(calls)).toEqual(calls.map(() => runId))
    await shutdown(s.runtime)
    // ioredis's ready checks (the client's and the subscriber's) and the first grant's: 3, with
    // room for one reconnect; one per grant would be 22.
    const infos = Number(/cmdstat_info:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1])
    expect(infos).toBeLessThanOrEqual(4)
    admin.disconnect()
  })
})
