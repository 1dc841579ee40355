// A failover on a real Redis Cluster of 3 primaries with a replica each: the
// replica of the primary that owns a held key takes over (`CLUSTER FAILOVER`,
// the manual failover that first waits for the replica to catch up). The
// holder's lease ends with LeaseLostError (the new primary is another server,
// another run_id, so its token is not honoured); waiters of the key on the
// old primary recover through the new one; new grants come from the new
// primary with fences above every fence before (the counter was replicated).

import { withCoordinator } from '@vega/job-coordination'
import { run, settle, shutdown, type TaskContext } from '@vega/job-core'
import { type RedisClusterNodes, startRedisCluster } from '@vega/redis-server'
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type FencingToken, fencingToken, LeaseLostError } from '../src/index.js'
import { holdUntilAborted, type Setup, setup } from './support.js'

let nodes: RedisClusterNodes
const clients: Cluster[] = []
beforeAll(async () => {
  nodes = await startRedisCluster({ replicas: 1 })
})
afterAll(async () => {
  for (const client of clients) client.disconnect()
  await nodes?.dispose()
})

function onCluster(): Setup {
  const client = new Cluster(
    nodes.ports.map((port) => ({ host: '127.0.0.1', port })),
    { redisOptions: { maxRetriesPerRequest: null } },
  )
  client.on('error', () => {})
  clients.push(client)
  return setup('', { redis: client as never, leaseMs: 1500 })
}

type SlotRange = [number, number, [string, number, string], ...[string, number, string][]]

/** The primary and the replica (ports) that serve the slot of `key`. */
async function servers(
  client: Cluster,
  key: string,
): Promise<{ primary: number; replica: number }> {
  const slot = Number(await client.cluster('KEYSLOT', key))
  const ranges = (await client.cluster('SLOTS')) as unknown as SlotRange[]
  const range = ranges.find(([from, to]) => slot >= from && slot <= to)
  const replica = range?.[3]
  if (range === undefined || replica === undefined)
    throw new Error(`no replica serves slot ${slot}`)
  return { primary: range[2][1], replica: replica[1] }
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await condition()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`the cluster never got there: ${what}`)
}

describe('a failover on a Redis Cluster with replicas', () => {
  it('CLUSTER FAILOVER under a holder: its lease ends with LeaseLostError, its waiter recovers, new fences are higher and name the new primary', async () => {
    const s = onCluster()
    const client = s.redis as unknown as Cluster
    const key = 'doc-7'
    // Replicas show in CLUSTER SLOTS once they joined their primary. Each
    // node answers from its own view, and views converge by gossip, so the
    // answer that showed the replica is the one used (a second question may
    // reach a node that does not see it yet).
    let found: { primary: number; replica: number } | undefined
    await until(async () => {
      found = await servers(client, `${s.prefix}:{"${key}"}:fence`).catch(() => undefined)
      return found !== undefined
    }, 'a replica for every primary')
    const { primary, replica } = found!
    const replicaAdmin = new Redis(replica, '127.0.0.1')
    await until(
      async () => /master_link_status:up/.test(await replicaAdmin.info('replication')),
      'the replica in sync',
    )

    const { holder, token, signal } = holdUntilAborted(s, key)
    const before = await token
    // A second call waits in the key's line (on the old primary) through the failover.
    const waiter = run(
      s.runtime,
      withCoordinator(async (ctx: TaskContext) => fencingToken(ctx), s.cluster.serialize, { key }),
    )

    await replicaAdmin.cluster('FAILOVER')
    await until(
      async () => /role:master/.test(await replicaAdmin.info('replication')),
      'the replica promoted',
    )

    const lost = await settle(holder)
    expect(lost.status).toBe('error')
    expect(signal()?.reason).toBeInstanceOf(LeaseLostError)
    expect(String((signal()?.reason as Error | undefined)?.message)).toMatch(/run_id/)

    // The waiter gets the key from the new primary (after the holder's lease ended).
    const waited = await settle(waiter)
    expect(waited.status).toBe('success')
    const next = (waited as { value: FencingToken }).value
    expect(next.runId).not.toBe(before.runId)
    expect(next.fence).toBeGreaterThan(before.fence)
    // The cluster's view of the slot turns around too (each node learns it by gossip).
    let after: { primary: number; replica: number } | undefined
    await until(async () => {
      after = await servers(client, `${s.prefix}:{"${key}"}:fence`).catch(() => undefined)
      return after?.primary === replica && after.replica === primary
    }, 'the old replica serving the slot, the old primary its replica')
    expect(after).toEqual({ primary: replica, replica: primary })
    const runIdOfReplica = /run_id:(\w+)/.exec(await replicaAdmin.info('server'))?.[1]
    expect(next.runId).toBe(runIdOfReplica)

    await shutdown(s.runtime)
    expect(s.cluster.inspect()).toEqual({ waiters: 0, leases: 0, keys: 0 })
    replicaAdmin.disconnect()
  })
})
