// The bus's facts (written once for every engine in @vega/distributed-tests),
// run on one primary (aggregate-bus.test.ts) and on a 3-primary Redis Cluster
// (aggregate-bus-cluster.test.ts): what only Redis can tell is said here.

import { describeBusFacts } from '@vega/distributed-tests/bus'
import { expect } from 'vitest'
import { type BusSetup, type BusTarget, busSetup, partitionKey } from './bus-support.js'

/** Declares the bus's facts; `target()` is asked inside each test, once the server runs. */
export function busFacts(name: string, target: () => BusTarget): void {
  describeBusFacts<BusSetup>({
    title: 'createRedisAggregateBus',
    where: name,
    setup: (options) => busSetup(target(), options),
    handoverWithinMs: 3000,
    churn: { perId: 50, step: 150 },
    async storedAsSent({ redis, prefix }, receipt) {
      expect(receipt.entryId).toMatch(/^\d+-\d+$/)
      const entries = await redis.xrange(
        partitionKey(prefix, 'sales.Order', receipt.partition, 'p'),
        '-',
        '+',
      )
      expect(entries).toEqual([[receipt.entryId, ['i', 'order-1', 'b', '{"seq":1}']]])
    },
    async sendUndecodable({ redis, prefix }, aggregate, id, partition) {
      await redis.xadd(
        partitionKey(prefix, aggregate, partition, 'p'),
        '*',
        'i',
        id,
        'b',
        '{not json',
      )
    },
    async takePartition({ redis, prefix }, aggregate, partition) {
      await redis.set(
        partitionKey(prefix, aggregate, partition, 'own'),
        '99|someone-else',
        'PX',
        60_000,
      )
    },
    kept: ({ redis, prefix }, aggregate, partition) =>
      redis.xlen(partitionKey(prefix, aggregate, partition, 'p')),
    async afterHandover({ redis, prefix }, aggregate, next) {
      // The consumer that left left the partition's consumer group when the next one took its pending entries.
      const group = (await redis.xinfo(
        'CONSUMERS',
        partitionKey(prefix, aggregate, 0, 'p'),
        'vj',
      )) as string[][]
      expect(group.map((info) => info[1])).toEqual([next.id])
    },
    async nothingHeld(setup, aggregate, partitions) {
      const left = (await setup.keys()).filter((key) => !key.endsWith(':fence'))
      expect(left).toEqual([])
      for (let p = 0; p < partitions; p++) {
        expect(await setup.redis.exists(partitionKey(setup.prefix, aggregate, p, 'own'))).toBe(0)
      }
    },
    async onlyFencesLeft(setup, aggregate, partitions) {
      const keys = (await setup.keys()).sort()
      expect(keys).toEqual(
        Array.from({ length: partitions }, (_, p) =>
          partitionKey(setup.prefix, aggregate, p, 'fence'),
        ).sort(),
      )
      // Each with a TTL.
      for (const key of keys) expect(await setup.redis.pttl(key)).toBeGreaterThan(0)
    },
  })
}
