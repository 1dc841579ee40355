/**
 * `active`: owned, its messages are read and handled. `handover`: owned, but
 * giving it back: nothing new starts, and it is released once its running
 * handlers settled. `gone`: lost or released; its queued messages are
 * skipped and stay in the table for the next owner.
 */
export type PartitionState = 'active' | 'handover' | 'gone'

/** One partition this consumer owns under a fenced lease. */
export class OwnedPartition {
  state: PartitionState = 'active'
  /** The highest seq read: the next read asks for the ones after it. */
  after = 0
  /**
   * Wake-ups heard (a send's NOTIFY) or given by the consumer, and how many
   * of them the last finished read covered: it is read again while they
   * differ, or a read came back full.
   */
  wakes = 1
  readUpTo = 0
  /** Local clock (performance.now) until which the lease surely holds: the send time of the last renewal + leaseMs. */
  validUntil: number
  /** Messages read and not yet settled (queued or running). */
  outstanding = 0
  /** Messages inside the handler (or between its retries) now. */
  running = 0
  /** Aborts the handlers' signal: the lease is lost, or the stop deadline passed. */
  readonly lost: AbortController = new AbortController()
  /** Aborts retry waits when the partition is handed over. */
  readonly yielding: AbortController = new AbortController()

  constructor(
    readonly index: number,
    readonly fence: number,
    validUntil: number,
  ) {
    this.validUntil = validUntil
  }
}
