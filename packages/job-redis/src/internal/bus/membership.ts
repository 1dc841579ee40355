import { LeaseLostError } from '../../errors.js'
import { bounded } from '../bounded.js'
import type { ConsumerConfig } from './config.js'
import { FENCE_TTL_MS, GROUP } from './keys.js'
import { OwnedPartition } from './partition.js'
import { busScripts } from './scripts.js'

/** What membership tells the rest of its consumer. */
export interface MembershipHooks {
  /** Whether the consumer still takes partitions (false once its stop began). */
  wantsPartitions(): boolean
  /** The set of owned partitions changed, or one became idle: wake the reader, re-check a stop. */
  changed(): void
  report(error: unknown): void
}

/** One tick's reply: live consumers, the quota, renewed flags per held pair, granted (partition, fence) pairs. */
type TickReply = [number, number, number[], number[]]

/**
 * A consumer's share of the partitions: one tick every leaseMs / 3 (and when
 * the control stream moves) joins the members, renews the leases it holds,
 * takes free partitions up to its quota and learns that quota; local expiry
 * loses a lease whose renewal was not confirmed within leaseMs, before any
 * handler starts under it. Every round trip is bounded by connectTimeoutMs.
 */
export class Membership {
  readonly partitionsById: Map<number, OwnedPartition> = new Map()
  live = 0
  quota = 0
  leasesLost = 0
  released = 0
  private ticking = false
  private tickAgain = false
  private stopped = false
  private readonly timer: NodeJS.Timeout

  constructor(
    private readonly config: ConsumerConfig,
    private readonly hooks: MembershipHooks,
  ) {
    this.timer = setInterval(
      () => {
        // Even while a renewal hangs on a silent Redis, the local lease clock runs out.
        this.expireLocally()
        void this.tick()
      },
      Math.max(1, Math.floor(config.leaseMs / 3)),
    )
  }

  owned(): OwnedPartition[] {
    return [...this.partitionsById.values()]
  }

  /** Stops ticking for good (the consumer stopped); no timer is left. */
  stop(): void {
    this.stopped = true
    clearInterval(this.timer)
  }

  async tick(): Promise<void> {
    if (this.stopped) return
    if (this.ticking) {
      this.tickAgain = true
      return
    }
    this.ticking = true
    try {
      do {
        this.tickAgain = false
        await this.tickOnce()
      } while (this.tickAgain && !this.stopped)
    } finally {
      this.ticking = false
    }
  }

  private async tickOnce(): Promise<void> {
    this.expireLocally()
    const { redis, keys, leaseMs, partitions, connectTimeoutMs, id } = this.config
    const held = this.owned()
    const want = this.hooks.wantsPartitions()
    const args: (string | number)[] = [
      id,
      leaseMs,
      partitions,
      keys.base,
      FENCE_TTL_MS,
      want ? 1 : 0,
      Math.floor(Math.random() * partitions),
      GROUP,
    ]
    for (const p of held) args.push(p.index, p.token)
    const sentAt = performance.now()
    let reply: TickReply
    try {
      reply = (await bounded(
        'tick',
        connectTimeoutMs,
        () => busScripts.tick.run(redis, [keys.members, keys.ctl], args),
        // Granted after the timeout: nobody counts on them; give them back at once.
        (late) => void this.release(this.grantsOf(late as TickReply, 0), false),
      )) as TickReply
    } catch (error) {
      this.hooks.report(error)
      return
    }
    const [live, quota, renewed] = reply
    held.forEach((p, k) => {
      if (p.state === 'gone') return
      if (renewed[k] === 1) p.validUntil = sentAt + leaseMs
      else this.lose(p, 'its lease ended before it was renewed')
    })
    this.live = live
    this.quota = quota
    const granted = this.grantsOf(reply, sentAt + leaseMs)
    for (const p of granted) {
      if (!this.hooks.wantsPartitions()) {
        // Granted by a tick sent before the stop began: given back at once.
        void this.release([p], false)
        continue
      }
      this.partitionsById.set(p.index, p)
    }
    if (granted.length > 0) this.hooks.changed()
    if (this.hooks.wantsPartitions()) this.shedExcess()
  }

  private grantsOf(reply: TickReply, validUntil: number): OwnedPartition[] {
    const granted = reply[3]
    const { keys, id } = this.config
    const out: OwnedPartition[] = []
    for (let k = 0; k < granted.length; k += 2) {
      out.push(new OwnedPartition(Number(granted[k]), Number(granted[k + 1]), id, keys, validUntil))
    }
    return out
  }

  /** More than the quota (a consumer joined): hand the least busy partitions over. */
  private shedExcess(): void {
    const active = this.owned().filter((p) => p.state === 'active')
    const excess = active.length - this.quota
    if (excess <= 0) return
    active.sort((a, b) => a.running - b.running || b.index - a.index)
    for (const p of active.slice(0, excess)) this.handover(p)
  }

  /** A lease not confirmed within leaseMs (a paused process, a silent Redis) is lost, before any handler starts under it. */
  expireLocally(): void {
    const now = performance.now()
    for (const p of this.owned()) {
      if (now >= p.validUntil) this.lose(p, 'no renewal was confirmed within leaseMs')
    }
  }

  /** Whether a handler may start under `p`'s lease now. */
  mayStart(p: OwnedPartition): boolean {
    if (p.state !== 'active') return false
    if (performance.now() >= p.validUntil) {
      this.lose(p, 'no renewal was confirmed within leaseMs')
      return false
    }
    return true
  }

  lose(p: OwnedPartition, why: string): void {
    if (p.state === 'gone') return
    p.state = 'gone'
    if (this.partitionsById.get(p.index) === p) this.partitionsById.delete(p.index)
    this.leasesLost++
    const error = new LeaseLostError(
      `@vega/job-redis bus: consumer ${this.config.id} lost partition ${p.index} of ${this.config.aggregate} (fence ${p.fence}): ${why}.`,
      p.own,
      p.fence,
    )
    p.lost.abort(error)
    p.yielding.abort(error)
    this.hooks.changed()
  }

  handover(p: OwnedPartition): void {
    if (p.state !== 'active') return
    p.state = 'handover'
    p.yielding.abort()
    if (p.running === 0) void this.release([p], false)
  }

  /** Gives partitions back at once (bounded); not released, their leases run out within leaseMs. */
  async release(parts: OwnedPartition[], leaving: boolean): Promise<number> {
    const { redis, keys, connectTimeoutMs, id } = this.config
    if (parts.length === 0 && !leaving) return 0
    const args: (string | number)[] = [id, keys.base, leaving ? 1 : 0, FENCE_TTL_MS]
    for (const p of parts) {
      if (p.state !== 'gone') {
        p.state = 'gone'
        if (this.partitionsById.get(p.index) === p) this.partitionsById.delete(p.index)
        p.yielding.abort()
      }
      args.push(p.index, p.token)
    }
    this.hooks.changed()
    try {
      const count = (await bounded('release', connectTimeoutMs, () =>
        busScripts.release.run(redis, [keys.members, keys.ctl], args),
      )) as number
      this.released += count
      return count
    } catch (error) {
      this.hooks.report(error)
      return 0
    } finally {
      this.hooks.changed()
    }
  }
}
