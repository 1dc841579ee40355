import { type AckVerdict, type Deferred, deferred } from '@vega/job-distributed'
import type { PostgresPartition } from './partition.js'
import type { PostgresBusStore } from './store.js'

/** The most messages one acknowledgement deletes: a bounded statement, however many settled at once. */
const MAX_BATCH = 1000

/**
 * Acknowledges handled messages in batches: every ack requested while one
 * round trip is in flight goes in the next (at most {@link MAX_BATCH}
 * rows), one fenced DELETE for all partitions.
 */
export class Acker {
  private pending: [PostgresPartition, number, Deferred<AckVerdict>][] = []
  private flushing = false

  constructor(
    private readonly store: PostgresBusStore,
    private readonly aggregate: string,
    private readonly consumerId: string,
    private readonly failed: (error: unknown) => void,
  ) {}

  ack(partition: PostgresPartition, seq: number): Promise<AckVerdict> {
    const verdict = deferred<AckVerdict>()
    this.pending.push([partition, seq, verdict])
    if (!this.flushing) {
      this.flushing = true
      // One turn later: acks of handlers settling in the same turn share the trip.
      setImmediate(this.flush)
    }
    return verdict.promise
  }

  private readonly flush = (): void => {
    const taken = this.pending.splice(0, MAX_BATCH)
    const batch = new Map<PostgresPartition, number[]>()
    for (const [p, seq] of taken) {
      let seqs = batch.get(p)
      if (seqs === undefined) {
        seqs = []
        batch.set(p, seqs)
      }
      seqs.push(seq)
    }
    this.store.ack(this.aggregate, this.consumerId, batch).then(
      (acked) => {
        for (const [p, , verdict] of taken) {
          verdict.resolve(acked.has(`${p.index}:${p.fence}`) ? 'acked' : 'refused')
        }
        this.next()
      },
      (error: unknown) => {
        this.failed(error)
        // Not known to have counted: the messages stay for the next owner.
        for (const [, , verdict] of taken) verdict.resolve('unconfirmed')
        this.next()
      },
    )
  }

  private next(): void {
    if (this.pending.length === 0) this.flushing = false
    else this.flush()
  }
}
