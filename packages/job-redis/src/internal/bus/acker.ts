import { type AckVerdict, type Deferred, deferred } from '@vega/job-distributed'
import type { RedisClient } from '../redis-io.js'
import { GROUP } from './keys.js'
import { type Outcome, runByNode, sameSlotBatches, scriptStep } from './nodes.js'
import type { RedisPartition } from './partition.js'
import { busScripts } from './scripts.js'

interface Batch {
  readonly ids: string[]
  readonly verdict: Deferred<AckVerdict>
}

/**
 * Acknowledges handled entries in batches: every ack requested while one
 * round trip is in flight goes in the next: one script call for all
 * partitions on one primary, one per partition (its slot) on a cluster, one
 * pipeline per node. Each ack is fenced by its partition's
 * token on the server. Every round trip is bounded by connectTimeoutMs.
 */
export class Acker {
  private pending = new Map<RedisPartition, Batch>()
  private flushing = false

  constructor(
    private readonly redis: RedisClient,
    private readonly connectTimeoutMs: number,
    private readonly failed: (error: unknown) => void,
  ) {}

  ack(partition: RedisPartition, entryId: string): Promise<AckVerdict> {
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
    const batches = sameSlotBatches(this.redis, [...this.pending])
    this.pending = new Map()
    const steps = batches.map((batch) => {
      const keys: string[] = []
      const args: string[] = [GROUP]
      for (const [partition, { ids }] of batch) {
        keys.push(partition.own, partition.stream)
        args.push(partition.token, String(ids.length), ...ids)
      }
      return scriptStep(busScripts.ack, keys, args)
    })
    void runByNode(this.redis, 'ack', this.connectTimeoutMs, steps).then((outcomes) => {
      let failed = false
      batches.forEach((batch, k) => {
        const outcome = outcomes[k] as Outcome
        if (!outcome.ok && !failed) this.failed(outcome.error)
        failed ||= !outcome.ok
        batch.forEach(([, { verdict }], j) => {
          // Not known to have counted: the entries stay pending for the next owner.
          if (!outcome.ok) verdict.resolve('unconfirmed')
          else verdict.resolve((outcome.value as number[])[j] === 1 ? 'acked' : 'refused')
        })
      })
      this.next()
    })
  }

  private next(): void {
    if (this.pending.size === 0) this.flushing = false
    else this.flush()
  }
}
