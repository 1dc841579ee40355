// A consumer never handles a partition it does not own: every handler checks,
// in Redis, that the partition's lease is held by its own consumer under the
// delivery's fence, while consumers join and leave and partitions move. Run
// on one primary (aggregate-bus-ownership.test.ts) and on a cluster.

import { ownershipFact as sharedOwnershipFact } from '@vega/distributed-tests/bus'
import { toGroupKey } from '@vega/job-scheduler'
import { type BusSetup, type BusTarget, busSetup, partitionKey } from './bus-support.js'

/** Consumers join and leave while messages flow; every handler checks its lease in Redis. */
export function ownershipFact(target: BusTarget): Promise<void> {
  let checker: BusSetup['redis'] | undefined
  return sharedOwnershipFact<BusSetup>({
    setup: (options) => {
      const setup = busSetup(target, options)
      checker = setup.client()
      return setup
    },
    partitionOf: toGroupKey,
    async leaseViolation({ prefix }, aggregate, delivery) {
      const owner = await checker?.get(partitionKey(prefix, aggregate, delivery.partition, 'own'))
      if (owner === `${delivery.fence}|${delivery.consumerId}`) return undefined
      return `${delivery.consumerId} handled ${delivery.id} of partition ${delivery.partition} under fence ${delivery.fence}, but the partition's lease is ${owner ?? 'free'}`
    },
  })
}
