import { Redis } from 'ioredis'
import {
  type AggregateBusConsumer,
  createRedisAggregateBus,
  type Delivery,
  type RedisAggregateBus,
  type RedisAggregateBusOptions,
} from '../src/index.js'
import { uniquePrefix } from './support.js'

export interface BusSetup {
  readonly redis: Redis
  readonly bus: RedisAggregateBus
  readonly prefix: string
  /** Clients opened by this setup, closed by close(). */
  client(): Redis
  close(): void
}

export function busSetup(url: string, options: Partial<RedisAggregateBusOptions> = {}): BusSetup {
  const clients: Redis[] = []
  const client = () => {
    const redis = new Redis(url, { maxRetriesPerRequest: null })
    redis.on('error', () => {})
    clients.push(redis)
    return redis
  }
  const redis = client()
  const prefix = uniquePrefix()
  const bus = createRedisAggregateBus({ redis, prefix, partitions: 8, leaseMs: 600, ...options })
  return {
    redis,
    bus,
    prefix,
    client,
    close() {
      for (const c of clients) c.disconnect()
    },
  }
}

/** What handlers saw, in handling order: enter and leave of each delivery. */
export interface Handled {
  readonly id: string
  readonly seq: number
  readonly attempt: number
  readonly fence: number
  readonly consumerId: string
}

/** Sends `perId` messages to each of `ids` ids, bodies { seq }, round-robin over ids, in order per id. */
export async function sendAll(
  bus: RedisAggregateBus,
  aggregate: string,
  ids: readonly string[],
  perId: number,
): Promise<void> {
  for (let seq = 1; seq <= perId; seq++) {
    await Promise.all(ids.map((id) => bus.send({ aggregate, id, body: { seq } })))
  }
}

/** A handler that records each delivery and checks nobody else holds its id. */
export function recorder(): {
  handled: Handled[]
  overlaps: string[]
  /** The most handlers inside at once. */
  readonly maxInside: number
  handle: (delivery: Delivery<{ seq: number }>) => Promise<void>
} {
  const handled: Handled[] = []
  const overlaps: string[] = []
  const inside = new Set<string>()
  let maxInside = 0
  return {
    handled,
    overlaps,
    get maxInside() {
      return maxInside
    },
    async handle(delivery) {
      if (inside.has(delivery.id)) overlaps.push(delivery.id)
      inside.add(delivery.id)
      maxInside = Math.max(maxInside, inside.size)
      await new Promise((resolve) => setImmediate(resolve))
      handled.push({
        id: delivery.id,
        seq: delivery.body.seq,
        attempt: delivery.attempt,
        fence: delivery.fence,
        consumerId: delivery.consumerId,
      })
      inside.delete(delivery.id)
    },
  }
}

export type { AggregateBusConsumer }
