import type { BusWakeHooks, BusWakeups } from '@vega/job-distributed'
import type { RedisClient } from '../redis-io.js'
import { ShardedSubscriber } from '../sharded-subscriber.js'
import type { RedisPartition } from './partition.js'

/**
 * A consumer's sharded pub/sub: the aggregate's membership channel, and the
 * wake-up channel of each partition it owns (in the partition's slot, so on a
 * cluster it is heard from the primary that holds the partition, and a
 * consumer hears only its own partitions' sends). A subscription that just
 * held counts as heard: a message sent before it is then found by the read
 * it triggers. A message not heard costs one safety-net period.
 */
export class Wakeups implements BusWakeups<RedisPartition> {
  private readonly subscriber: ShardedSubscriber
  private readonly partitions = new Map<string, RedisPartition>()
  private closed = false

  constructor(
    redis: RedisClient,
    private readonly ctl: string,
    private readonly consumerId: string,
    private readonly hooks: BusWakeHooks,
  ) {
    this.subscriber = new ShardedSubscriber(redis, (channel, message) =>
      this.heard(channel, message),
    )
    this.subscribe(ctl, () => hooks.membershipChanged())
  }

  /** Listens to the partitions owned now, and no more to the others. */
  sync(owned: readonly RedisPartition[]): void {
    if (this.closed) return
    const wanted = new Map(owned.map((p) => [p.keys.wake, p]))
    for (const channel of [...this.partitions.keys()]) {
      if (wanted.has(channel)) continue
      this.partitions.delete(channel)
      this.subscriber.unsubscribe(channel)
    }
    for (const [channel, p] of wanted) {
      const known = this.partitions.get(channel)
      this.partitions.set(channel, p)
      if (known !== undefined) continue
      this.subscribe(channel, () => {
        const current = this.partitions.get(channel)
        if (current !== undefined) this.hooks.woke(current.index)
      })
    }
  }

  close(): void {
    this.closed = true
    this.partitions.clear()
    this.subscriber.close()
  }

  private subscribe(channel: string, held: () => void): void {
    // Not subscribed: the next sync tries again; until then the safety net reads.
    const failed = () => {
      if (channel !== this.ctl) this.partitions.delete(channel)
    }
    this.subscriber.subscribe(
      channel,
      () => {
        if (!this.closed) held()
      },
      failed,
    )
  }

  private heard(channel: string, message: string): void {
    if (channel === this.ctl) {
      if (message !== this.consumerId) this.hooks.membershipChanged()
      return
    }
    const p = this.partitions.get(channel)
    if (p !== undefined) this.hooks.woke(p.index)
  }
}
