import { type BusEntry, BusPartition } from '@vega/job-distributed'

/** A partition this consumer owns: the engine-neutral state, and how far it read. */
export class PostgresPartition extends BusPartition {
  /** The highest seq read: the next read asks for the ones after it. */
  after = 0
}

/** One message as a read returns it. */
export interface PostgresEntry extends BusEntry {
  /** Its place in the partition, given at commit. */
  readonly seq: number
}
