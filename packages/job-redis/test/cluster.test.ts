// The coordinators on a real Redis Cluster of 3 primaries: every script
// touches one slot (a key's parts share a hash tag), keys spread over the
// primaries, and a primary that stops and comes back ends calls clearly and
// recovers, refusing the tokens it granted before.

import { runFacts } from '@vega/distributed-tests'
import { withCoordinator } from '@vega/job-coordination'
import { run, settle, shutdown, type TaskContext } from '@vega/job-core'
import { type RedisClusterNodes, startRedisCluster } from '@vega/redis-server'
import { Cluster } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertLease,
  type FencingToken,
  fencingToken,
  LeaseLostError,
  RedisUnavailableError,
} from '../src/index.js'
import { holdUntilAborted, type Setup, setup } from './support.js'

let nodes: RedisClusterNodes
const clients: Cluster[] = []
beforeAll(async () => {
  nodes = await startRedisCluster()
})
afterAll(async () => {
  for (const client of clients) client.disconnect()
  await nodes?.dispose()
})

function clusterClient(): Cluster {
  const client = new Cluster(
    nodes.ports.map((port) => ({ host: '127.0.0.1', port })),
    { redisOptions: { maxRetriesPerRequest: null } },
  )
  client.on('error', () => {})
  clients.push(client)
  return client
}

function onCluster(options: Parameters<typeof setup>[1] = {}): Setup {
  return setup('', { redis: clusterClient() as never, leaseMs: 1500, ...options })
}

describe('the coordinators on a 3-primary Redis Cluster', () => {
  it('hold their facts: dedupe runs one body, serialize never overlaps, exhaust drops, restart keeps the newest, keepLatest runs the first and the last', async () => {
    const s = onCluster()
    const dedupe = await runFacts(s, s.cluster.dedupe)
    expect(dedupe.bodies).toEqual([1])
    expect(dedupe.promises.every((p) => p.status === 'resolved' && p.value === 1)).toBe(true)
    const serialize = await runFacts(s, s.cluster.serialize)
    expect(serialize.bodies).toEqual([1, 2, 3, 4])
    expect(serialize.maxInside).toBe(1)
    const exhaust = await runFacts(s, s.cluster.exhaust)
    expect(exhaust.bodies).toEqual([1])
    const restart = await runFacts(s, s.cluster.restart)
    expect(restart.tasks.map((t) => t.state)).toEqual([
      'cancelled',
      'cancelled',
      'cancelled',
      'success',
    ])
    const keepLatest = await runFacts(s, s.cluster.keepLatest)
    expect(keepLatest.bodies).toEqual([1, 4])
    await shutdown(s.runtime)
    expect(s.cluster.inspect()).toEqual({ waiters: 0, leases: 0, keys: 0 })
  })

  it('spreads keys over every primary, each key’s keys in one slot, with tokens from the node that holds the key', async () => {
    const s = onCluster()
    const client = s.redis as unknown as Cluster
    const tokens: FencingToken[] = []
    const keys = Array.from({ length: 24 }, (_, i) => `doc-${i}`)
    await Promise.all(
      keys.map((key) =>
        run(
          s.runtime,
          withCoordinator(
            async (ctx: TaskContext) => {
              const token = await fencingToken(ctx)
              expect(await assertLease(ctx)).toEqual(token)
              tokens.push(token)
            },
            s.cluster.serialize,
            { key },
          ),
        ),
      ),
    )
    expect(tokens).toHaveLength(keys.length)
    // Every primary holds some fence counters, and names itself in the tokens it granted.
    const runIds = new Set(tokens.map((t) => t.runId))
    expect(runIds.size).toBe(3)
    for (const master of client.nodes('master')) {
      const held = await master.keys(`${s.prefix}:*`)
      expect(held.length).toBeGreaterThan(0)
      const slots = new Set(await Promise.all(held.map((key) => master.cluster('KEYSLOT', key))))
      // A key's fence counter and nothing else is left; each sits in its hash tag's slot.
      expect(held.every((key) => key.endsWith(':fence'))).toBe(true)
      expect(slots.size).toBe(held.length)
    }
    await shutdown(s.runtime)
  })

  it('a primary stopped and started again: its holder loses the lease, calls on it end with RedisUnavailableError, then succeed with a newer fence', async () => {
    const s = onCluster({ leaseMs: 1500 })
    const client = s.redis as unknown as Cluster
    // A key held by the first primary.
    const port = nodes.ports[0]!
    let key = ''
    for (let i = 0; key === ''; i++) {
      const candidate = `k${i}`
      const slot = Number(await client.cluster('KEYSLOT', `${s.prefix}:{"${candidate}"}:fence`))
      const ranges = (await client.cluster('SLOTS')) as unknown as [
        number,
        number,
        [string, number],
      ][]
      const owner = ranges.find(([from, to]) => slot >= from && slot <= to)
      if (owner?.[2][1] === port) key = candidate
    }
    const { holder, token, signal } = holdUntilAborted(s, key)
    const before = await token
    await nodes.stop(port)
    const lost = await settle(holder)
    expect(lost.status).toBe('error')
    expect(signal()?.reason).toBeInstanceOf(LeaseLostError)
    const during = await settle(
      run(
        s.runtime,
        withCoordinator(async () => 'x', s.cluster.exhaust, { key }),
      ),
    )
    expect(during.status).toBe('error')
    expect((during as { error: unknown }).error).toBeInstanceOf(RedisUnavailableError)

    await nodes.start(port)
    await nodes.healthy()
    let after: FencingToken | undefined
    for (let attempt = 0; after === undefined && attempt < 100; attempt++) {
      const outcome = await settle(
        run(
          s.runtime,
          withCoordinator(async (ctx: TaskContext) => fencingToken(ctx), s.cluster.exhaust, {
            key,
          }),
        ),
      )
      if (outcome.status === 'success') after = outcome.value as FencingToken
      else await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(after).toBeDefined()
    // The restarted primary is another server (run_id) and seeds its counter from its clock.
    expect(after!.runId).not.toBe(before.runId)
    expect(after!.fence).toBeGreaterThan(before.fence)
    await shutdown(s.runtime)
  })
})
