import { type BusEntry, BusPartition } from '@vega/job-distributed'
import type { BusKeys, PartitionKeys } from './keys.js'

/**
 * One partition this consumer owns: the engine-neutral state, its keys, and
 * the take-over of a previous owner's pending entries.
 */
export class RedisPartition extends BusPartition {
  /** Its pending entries (a previous owner's) are being taken over; no new reads until done. */
  claiming = true
  claimCursor = '0-0'
  readonly token: string
  readonly keys: PartitionKeys
  readonly stream: string
  readonly own: string

  constructor(index: number, fence: number, consumerId: string, keys: BusKeys) {
    super(index, fence)
    this.token = `${fence}|${consumerId}`
    this.keys = keys.partition(index)
    this.stream = this.keys.stream
    this.own = this.keys.own
  }
}

/** One stream entry, ready for a handler. */
export type RedisEntry = BusEntry
