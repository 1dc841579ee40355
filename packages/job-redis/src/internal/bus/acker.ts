import type { Redis } from 'ioredis'
import { bounded } from '../bounded.js'
import { type Deferred, deferred } from '../deferred.js'
import { GROUP } from './keys.js'
import type { OwnedPartition } from './partition.js'
import { busScripts } from './scripts.js'

/**
 * How an acknowledgement ended: counted, refused by the server (another
 * owner holds the partition), or not confirmed (Redis failed or did not
 * answer within connectTimeoutMs; the entry stays pending for the next owner).
 */
export type AckVerdict = 'acked' | 'refused' | 'unconfirmed'

interface Batch {
  readonly ids: string[]
  readonly verdict: Deferred<AckVerdict>
}

/**
 * Acknowledges handled entries in batches: every ack requested while one
 * round trip is in flight goes in the next, one script call for all
 * partitions. Each ack is fenced by its partition's token on the server.
 * Every round trip is bounded by connectTimeoutMs.
 */
export class Acker {
  private pending = new Map<OwnedPartition, Batch>()
  private flushing = false

  constructor(
    private readonly redis: Redis,
    private readonly connectTimeoutMs: number,
    private readonly failed: (error: unknown) => void,
  ) {}

  ack(partition: OwnedPartition, entryId: string): Promise<AckVerdict> {
    let batch = this.pending.get(partition)
    if (batch === undefined) {
      batch = { ids: [], verdict: deferred() }
      this.pending.set(partition, batch)
    }
    batch.ids.push(entryId)
    if (!this.flushing) {
      this.flushing = true
      // One turn later: acks of handlers settling in the same turn share the trip.
      setImmediate(this.flush)
    }
    return batch.verdict.promise
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
    bounded('ack', this.connectTimeoutMs, () => busScripts.ack.run(this.redis, keys, args)).then(
      (reply) => {
        const flags = reply as number[]
        order.forEach((batch, index) => {
          batch.verdict.resolve(flags[index] === 1 ? 'acked' : 'refused')
        })
        this.next()
      },
      (error: unknown) => {
        // Not known to have counted: the entries stay pending for the next owner.
        this.failed(error)
        for (const batch of order) batch.verdict.resolve('unconfirmed')
        this.next()
      },
    )
  }

  private next(): void {
    if (this.pending.size === 0) this.flushing = false
    else this.flush()
  }
}
