import type { Redis } from 'ioredis'
import { GROUP } from './keys.js'
import type { OwnedPartition } from './partition.js'
import { busScripts } from './scripts.js'

interface Batch {
  readonly ids: string[]
  readonly waiters: ((ok: boolean) => void)[]
}

/**
 * Acknowledges handled entries in batches: every ack requested while one
 * round trip is in flight goes in the next, one script call for all
 * partitions. Each ack is fenced by its partition's token on the server;
 * the promise says whether it counted.
 */
export class Acker {
  private pending = new Map<OwnedPartition, Batch>()
  private flushing = false

  constructor(
    private readonly redis: Redis,
    private readonly failed: (error: unknown) => void,
  ) {}

  ack(partition: OwnedPartition, entryId: string): Promise<boolean> {
    return new Promise((resolve) => {
      let batch = this.pending.get(partition)
      if (batch === undefined) {
        batch = { ids: [], waiters: [] }
        this.pending.set(partition, batch)
      }
      batch.ids.push(entryId)
      batch.waiters.push(resolve)
      if (!this.flushing) {
        this.flushing = true
        // One turn later: acks of handlers settling in the same turn share the trip.
        setImmediate(this.flush)
      }
    })
  }

  private readonly flush = (): void => {
    const batches = this.pending
    this.pending = new Map()
    const keys: string[] = []
    const args: string[] = [GROUP]
    const order: Batch[] = []
    for (const [partition, batch] of batches) {
      keys.push(partition.own, partition.stream)
      args.push(partition.token, String(batch.ids.length), ...batch.ids)
      order.push(batch)
    }
    busScripts.ack.run(this.redis, keys, args).then(
      (reply) => {
        const flags = reply as number[]
        order.forEach((batch, index) => {
          for (const resolve of batch.waiters) resolve(flags[index] === 1)
        })
        this.next()
      },
      (error: unknown) => {
        // Not known to have counted: the entries stay pending for the next owner.
        this.failed(error)
        for (const batch of order) for (const resolve of batch.waiters) resolve(false)
        this.next()
      },
    )
  }

  private next(): void {
    if (this.pending.size === 0) this.flushing = false
    else this.flush()
  }
}
