// A consumer never handles a partition it does not own: every handler checks,
// in Redis, that the partition's lease is held by its own consumer under the
// delivery's fence, while consumers join and leave and partitions move. Run
// on one primary (aggregate-bus-ownership.test.ts) and on a cluster.

import { toGroupKey } from '@vega/job-scheduler'
import { expect } from 'vitest'
import type { AggregateBusConsumer, Delivery } from '../src/index.js'
import { type BusTarget, busSetup, partitionKey } from './bus-support.js'
import { eventually } from './support.js'

const PARTITIONS = 8

/** Consumers join and leave while messages flow; every handler checks its lease in Redis. */
export async function ownershipFact(target: BusTarget): Promise<void> {
  // A lease long enough that only a bug, not a slow machine, lets one run out mid-check.
  const setup = busSetup(target, { partitions: PARTITIONS, leaseMs: 3000 })
  const { bus, prefix } = setup
  const checker = setup.client()
  const violations: string[] = []
  const handledBy = new Map<string, Set<string>>()
  let handled = 0
  const handle = async (delivery: Delivery<{ seq: number }>) => {
    const expected = toGroupKey(delivery.id, PARTITIONS)
    if (delivery.partition !== expected) {
      violations.push(`${delivery.id} came from partition ${delivery.partition}, not ${expected}`)
    }
    const owner = await checker.get(partitionKey(prefix, 'sales.Order', delivery.partition, 'own'))
    if (owner !== `${delivery.fence}|${delivery.consumerId}`) {
      violations.push(
        `${delivery.consumerId} handled ${delivery.id} of partition ${delivery.partition} under fence ${delivery.fence}, but the partition's lease is ${owner ?? 'free'}`,
      )
    }
    let consumers = handledBy.get(String(delivery.partition))
    if (consumers === undefined) {
      consumers = new Set()
      handledBy.set(String(delivery.partition), consumers)
    }
    consumers.add(delivery.consumerId)
    handled++
  }
  const ids = Array.from({ length: 48 }, (_, i) => `order-${i}`)
  let sent = 0
  const sendRound = async () => {
    await Promise.all(ids.map((id) => bus.send({ aggregate: 'sales.Order', id, body: { seq: 0 } })))
    sent += ids.length
  }
  const consumers: AggregateBusConsumer[] = []
  const join = () => {
    const consumer = bus.consume('sales.Order', handle, { parallelism: 4 })
    consumers.push(consumer)
    return consumer
  }
  const a = join()
  await eventually(() => a.owned().length === PARTITIONS, 10_000, 'a owns every partition')
  await sendRound()
  const b = join()
  await sendRound()
  const c = join()
  await eventually(
    () => consumers.every((x) => x.owned().length > 0),
    20_000,
    'b and c took partitions over',
  )
  await sendRound()
  await a.stop({ mode: 'handover' })
  await sendRound()
  await eventually(
    () => b.owned().length + c.owned().length === PARTITIONS,
    20_000,
    'b and c own every partition after a left',
  )
  await sendRound()
  await eventually(() => handled >= sent, 30_000, 'every message handled')
  await Promise.all([b.stop(), c.stop()])
  expect(violations).toEqual([])
  // Partitions did move: the check saw handlers of several consumers.
  const movers = [...handledBy.values()].filter((set) => set.size > 1)
  expect(movers.length).toBeGreaterThan(0)
  setup.close()
}
