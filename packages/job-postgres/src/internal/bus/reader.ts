import { type BusReaderContext, BusReadLoop } from '@vega/job-distributed'
import type { PostgresEntry, PostgresPartition } from './partition.js'
import type { PostgresBusStore } from './store.js'

/** What a reader is made with. */
export interface ReaderConfig {
  readonly store: PostgresBusStore
  readonly aggregate: string
  readonly id: string
  readonly leaseMs: number
  readonly parallelism: number
}

/**
 * A consumer's reading: the messages after each owned partition's cursor,
 * in seq (commit) order, all due partitions in one statement that checks
 * their leases. A new owner's cursor starts at 0: what a previous owner
 * read and did not acknowledge comes first (its grant counted those as
 * redelivered). When and what to read is the shared loop's.
 */
export class Reader extends BusReadLoop<PostgresPartition, PostgresEntry> {
  constructor(
    private readonly config: ReaderConfig,
    context: BusReaderContext<PostgresPartition, PostgresEntry>,
  ) {
    super(context, config)
  }

  protected async read(due: PostgresPartition[]): Promise<boolean> {
    const { store, aggregate, id } = this.config
    const room = this.highWater - this.outstanding
    const count = Math.max(1, Math.min(512, Math.ceil(room / due.length)))
    const marks = new Map(due.map((p) => [p, p.wakes]))
    const reply = await store.read(aggregate, id, due, count)
    for (const p of reply.lost) this.context.lose(p, 'a newer owner holds it')
    for (const p of due) {
      if (reply.lost.includes(p)) continue
      const messages = reply.messages.get(p) ?? []
      // Read after a handover began, or after the lease was lost: left for the next owner.
      if (p.state === 'active') {
        for (const message of messages) {
          p.after = Math.max(p.after, message.seq)
          this.handOut(p, message)
        }
      }
      const mark = marks.get(p) as number
      if (messages.length < count && p.readUpTo < mark) p.readUpTo = mark
    }
    return true
  }
}
