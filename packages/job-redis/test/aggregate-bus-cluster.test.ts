// The aggregate bus on a real Redis Cluster of 3 primaries: the same facts as
// on one primary (bus-facts.ts, bus-ownership.ts), every partition's keys in
// one slot with the partitions spread over the primaries, and a primary
// restarted under a consumer.

import { toGroupKey } from '@vega/job-scheduler'
import { type RedisClusterNodes, startRedisCluster } from '@vega/redis-server'
import type { Cluster } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keySlot } from '../src/internal/bus/nodes.js'
import { busFacts } from './bus-facts.js'
import { ownershipFact } from './bus-ownership.js'
import { busSetup, onCluster, partitionKey, recorder, sendAll } from './bus-support.js'
import { eventually } from './support.js'

let nodes: RedisClusterNodes
beforeAll(async () => {
  nodes = await startRedisCluster()
}, 60_000)
afterAll(async () => {
  await nodes?.dispose()
})

busFacts('a 3-primary cluster', () => onCluster(nodes.ports))

describe('the aggregate bus on a 3-primary cluster', () => {
  it('every handler runs under its own consumer’s lease of the id’s partition, while consumers join and leave', async () => {
    await ownershipFact(onCluster(nodes.ports))
  })

  it('keeps each partition’s keys in one slot, the membership in another, and spreads the partitions over the three primaries', async () => {
    const partitions = 24
    const setup = busSetup(onCluster(nodes.ports), { partitions })
    const { bus, prefix } = setup
    const cluster = setup.redis as Cluster
    const ids = Array.from({ length: 240 }, (_, i) => `order-${i}`)
    await sendAll(bus, 'sales.Order', ids, 1)
    const seen = new Set<number>()
    const consumer = bus.consume<{ seq: number }>(
      'sales.Order',
      ({ partition }) => {
        seen.add(partition)
        // One dead letter per partition: its dead-letter stream lives beside the partition.
        throw new Error(`dead in ${partition}`)
      },
      { retry: 1 },
    )
    await eventually(
      async () => (await bus.deadLetters('sales.Order', 1000)).length === 240,
      20_000,
      'every message dead-lettered',
    )
    await eventually(() => consumer.owned().length === partitions, 10_000, 'all partitions owned')
    const [master] = cluster.nodes('master')
    const slotOf = async (key: string) => Number(await master?.cluster('KEYSLOT', key))
    const perPrimary = await Promise.all(
      cluster.nodes('master').map(async (node) => new Set(await node.keys(`${prefix}:*`))),
    )
    for (let p = 0; p < partitions; p++) {
      const keys = (['p', 'own', 'fence', 'dead'] as const).map((part) =>
        partitionKey(prefix, 'sales.Order', p, part),
      )
      const slots = await Promise.all(keys.map(slotOf))
      expect(new Set(slots).size).toBe(1)
      // The package computes the slot as the server does (its pipelines go to the slot's node).
      expect(keys.map(keySlot)).toEqual(slots)
      // All four on one primary, and only there.
      const holders = perPrimary.filter((held) => keys.every((key) => held.has(key)))
      expect(holders).toHaveLength(1)
    }
    // Keys whose hash tag Redis ignores (empty, unclosed) or takes the first of.
    for (const key of ['plain', 'a{}b', '{}{x}', 'a{b', 'x{y}z{w}', '{ü}ö', '']) {
      expect(keySlot(key)).toBe(await slotOf(key))
    }
    const members = `${prefix}:bus:{sales.Order}:members`
    expect(await cluster.exists(members)).toBe(1)
    expect(keySlot(members)).toBe(await slotOf(members))
    // Every primary holds some partitions.
    expect(perPrimary.every((held) => [...held].some((key) => key.endsWith('}:p')))).toBe(true)
    expect(seen.size).toBe(partitions)
    await consumer.stop()
    setup.close()
  })

  it('each consumer listens to the wake-up channels of the partitions it owns, on their primaries; once one left, each channel has exactly one listener', async () => {
    const partitions = 12
    const setup = busSetup(onCluster(nodes.ports), { partitions, leaseMs: 3000 })
    const { bus, prefix } = setup
    const cluster = setup.redis as Cluster
    const noop = async () => {}
    const a = bus.consume('sales.Order', noop)
    const b = bus.consume('sales.Order', noop)
    const spread = () =>
      a.owned().length + b.owned().length === partitions &&
      a.owned().length > 0 &&
      b.owned().length > 0
    await eventually(spread, 10_000, 'both consumers own partitions')
    const wake = (p: number) => `${prefix}:bus:{sales.Order:${p}}:wake`
    /** Subscribers of each partition's channel, asked of the primary that serves its slot. */
    const subscribers = () =>
      Promise.all(
        Array.from({ length: partitions }, async (_, p) => {
          const [, port] = (cluster.slots[keySlot(wake(p))]?.[0] ?? '').split(':')
          const node = cluster.nodes('master').find((n) => n.options.port === Number(port))
          const reply = (await node?.call('PUBSUB', 'SHARDNUMSUB', wake(p))) as [string, number]
          return Number(reply[1])
        }),
      )
    // At least one: ioredis 5's cluster subscriber group, when it resets while
    // a consumer starts, re-subscribes on its new connection the channel list
    // it captured before that connection was ready, so a channel the consumer
    // gave up in between can come back (its messages are then ignored: the
    // consumer hears only partitions it owns). Exactly one is asserted once a
    // consumer stopped, below, where each channel has one listener left.
    let counts: number[] = []
    await eventually(
      async () => {
        counts = await subscribers()
        return counts.every((count) => count >= 1) && spread()
      },
      10_000,
      'a subscriber on every partition channel',
    ).catch((error: Error) => {
      throw new Error(`${error.message}; subscribers per partition ${JSON.stringify(counts)}`)
    })
    await a.stop({ mode: 'handover' })
    await eventually(() => b.owned().length === partitions, 10_000, 'b owns every partition')
    // a's subscriptions went with it; b listens to all of them now.
    await eventually(
      async () => (await subscribers()).every((count) => count === 1),
      10_000,
      'still one subscriber per partition channel',
    )
    await b.stop()
    await eventually(
      async () => (await subscribers()).every((count) => count === 0),
      10_000,
      'nobody listens once both stopped',
    )
    setup.close()
  })

  it('a primary restarted under a consumer: its partitions are lost, taken again under newer fences, and every message is handled in order', async () => {
    const partitions = 6
    const setup = busSetup(onCluster(nodes.ports), {
      partitions,
      leaseMs: 1000,
      connectTimeoutMs: 800,
    })
    const { bus, prefix } = setup
    const cluster = setup.redis as Cluster
    const rec = recorder()
    const consumer = bus.consume('sales.Order', rec.handle)
    await eventually(() => consumer.owned().length === partitions, 10_000, 'all owned')
    const ids = Array.from({ length: 24 }, (_, i) => `order-${i}`)
    await sendAll(bus, 'sales.Order', ids, 2)
    await eventually(() => rec.handled.length === 48, 10_000, 'first messages handled')
    const fenceBefore = new Map(rec.handled.map((h) => [h.id, h.fence]))
    // The primary that holds partition 0, and the partitions it holds.
    const nodeOf = (p: number) =>
      cluster.slots[keySlot(partitionKey(prefix, 'sales.Order', p, 'p'))]?.[0]
    const victim = nodeOf(0) as string
    const port = Number(victim.split(':')[1])
    const onVictim = Array.from({ length: partitions }, (_, p) => p).filter(
      (p) => nodeOf(p) === victim,
    )

    await nodes.stop(port)
    // No renewal of its leases within leaseMs: the consumer gives those partitions up.
    await eventually(
      () => onVictim.every((p) => !consumer.owned().includes(p)),
      10_000,
      'the restarted primary’s partitions given up',
    )
    await nodes.start(port)
    await nodes.healthy()
    await eventually(() => consumer.owned().length === partitions, 20_000, 'all owned again')
    await Promise.all(ids.map((id) => bus.send({ aggregate: 'sales.Order', id, body: { seq: 3 } })))
    await eventually(
      () => ids.every((id) => rec.handled.some((h) => h.id === id && h.seq === 3)),
      20_000,
      'the messages sent after the restart handled',
    )
    await consumer.stop()
    for (const id of ids) {
      const seqs = rec.handled.filter((h) => h.id === id).map((h) => h.seq)
      // Every message once, in order per id, whether its partition lived on the restarted primary or not.
      expect(seqs).toEqual([1, 2, 3])
      if (onVictim.includes(toGroupKey(id, partitions))) {
        // Its counter went with the restarted primary; seeded from the clock, it still grew.
        const last = rec.handled.filter((h) => h.id === id).at(-1)
        expect(last?.fence).toBeGreaterThan(fenceBefore.get(id) as number)
      }
    }
    expect(rec.overlaps).toEqual([])
    setup.close()
  }, 60_000)
})
