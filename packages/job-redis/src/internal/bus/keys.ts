/**
 * The keys of one aggregate's bus. Each partition's keys share one hash tag
 * (`{<aggregate>:<n>}`), so every partition step runs in one slot and the
 * partitions spread over a cluster's primaries; the membership has a tag of
 * its own (`{<aggregate>}`).
 */
export class BusKeys {
  readonly base: string
  /** The live consumers: a sorted set scored by lease expiry. */
  readonly members: string
  /** The membership's sharded channel: a consumer joined, left or gave partitions back. */
  readonly ctl: string

  constructor(
    readonly prefix: string,
    readonly aggregate: string,
  ) {
    this.base = `${prefix}:bus:`
    this.members = `${this.base}{${aggregate}}:members`
    this.ctl = `${this.base}{${aggregate}}:ctl`
  }

  partition(index: number): PartitionKeys {
    const tag = `${this.base}{${this.aggregate}:${index}}:`
    return {
      stream: `${tag}p`,
      own: `${tag}own`,
      fence: `${tag}fence`,
      dead: `${tag}dead`,
      idle: `${tag}idle`,
      wake: `${tag}wake`,
    }
  }
}

/** The keys of one partition, all in its slot. */
export interface PartitionKeys {
  /** The partition's messages (a stream with the consumer group {@link GROUP}). */
  readonly stream: string
  /** Its lease: `<fence>|<consumer id>`, with a TTL of leaseMs. */
  readonly own: string
  /** Its fence counter. */
  readonly fence: string
  /** Its dead letters (a stream). */
  readonly dead: string
  /** Set while its owner has read everything: the next `send` clears it and publishes a wake-up. */
  readonly idle: string
  /** Its sharded wake-up channel: `send` publishes there, the owner listens. */
  readonly wake: string
}

/** The consumer group every consumer of a bus reads through. */
export const GROUP: string = 'vj'

/** Fence counters outlive every lease by far; refreshed at each grant. */
export const FENCE_TTL_MS: number = 24 * 60 * 60 * 1000
