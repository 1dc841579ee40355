import type { BusEngine, BusEntry, BusPartition } from '../../bus/bus-engine.js'

/** What membership tells the rest of its consumer. */
export interface MembershipHooks {
  /** Whether the consumer still takes partitions (false once its stop began). */
  wantsPartitions(): boolean
  /** The set of owned partitions changed, or one became idle: wake the reader, re-check a stop. */
  changed(): void
  /** A tick ended. */
  ticked(): void
  report(error: unknown): void
}

/** What membership needs to know of its consumer. */
export interface MembershipConfig {
  readonly aggregate: string
  readonly id: string
  readonly partitions: number
  readonly leaseMs: number
}

/**
 * A consumer's share of the partitions: one tick every leaseMs / 3 (and when
 * a wake-up says someone joined, left or gave partitions back) joins the
 * members and learns the quota (⌈partitions / live⌉), renews the leases it
 * holds and, while short of the quota, takes free partitions (a second
 * round trip); local expiry loses a lease whose renewal was not confirmed
 * within leaseMs, before any handler starts under it.
 */
export class Membership<P extends BusPartition> {
  readonly partitionsById: Map<number, P> = new Map()
  live = 0
  quota = 0
  leasesLost = 0
  released = 0
  private ticking: Promise<void> | undefined
  private tickAgain = false
  private stopped = false
  /** Releases nobody awaits (a grant that came after the stop, a handover): a stop waits for them. */
  private readonly givingBack: Set<Promise<number>> = new Set()
  private readonly timer: NodeJS.Timeout

  constructor(
    private readonly engine: BusEngine<P, BusEntry>,
    private readonly config: MembershipConfig,
    private readonly hooks: MembershipHooks,
  ) {
    this.timer = setInterval(
      () => {
        // Even while a renewal hangs on a silent storage, the local lease clock runs out.
        this.expireLocally()
        void this.tick()
      },
      Math.max(1, Math.floor(config.leaseMs / 3)),
    )
  }

  owned(): P[] {
    return [...this.partitionsById.values()]
  }

  /** Stops ticking for good (the consumer stopped); no timer is left. */
  stop(): void {
    this.stopped = true
    clearInterval(this.timer)
  }

  tick(): Promise<void> {
    if (this.stopped) return Promise.resolve()
    if (this.ticking !== undefined) {
      this.tickAgain = true
      return this.ticking
    }
    this.ticking = this.tickLoop().finally(() => {
      this.ticking = undefined
    })
    return this.ticking
  }

  private async tickLoop(): Promise<void> {
    do {
      this.tickAgain = false
      try {
        await this.tickOnce()
      } catch (error) {
        this.hooks.report(error)
      }
      this.hooks.ticked()
    } while (this.tickAgain && !this.stopped)
  }

  /**
   * Resolves once the tick in flight has ended and every partition it or a
   * handover gave back is released: after a stop, nothing of this
   * consumer's is left, not even a lease a tick sent before the stop was granted.
   */
  async settled(): Promise<void> {
    await this.ticking?.catch(() => {})
    await Promise.all([...this.givingBack])
  }

  private async tickOnce(): Promise<void> {
    this.expireLocally()
    const { leaseMs, partitions } = this.config
    const held = this.owned()
    const want = this.hooks.wantsPartitions()
    // Free partitions are looked for only while short of the quota (or before it is known).
    const probing = want && (this.quota === 0 || held.length < this.quota)
    const sentAt = performance.now()
    const reply = await this.engine.tick(held, want, probing)
    held.forEach((p, k) => {
      const renewed = reply.renewed[k]
      // Unconfirmed: the local lease clock decides.
      if (p.state === 'gone' || renewed === undefined) return
      if (renewed) p.validUntil = sentAt + leaseMs
      else this.lose(p, 'its lease ended before it was renewed')
    })
    if (reply.live === undefined) return
    this.live = reply.live
    this.quota = Math.ceil(partitions / Math.max(1, this.live))
    const need = this.quota - this.partitionsById.size
    if (want && need > 0) {
      if (probing) {
        const mine = new Set(this.partitionsById.keys())
        await this.grant(
          reply.free.filter((index) => !mine.has(index)),
          need,
        )
      }
      // The quota grew since the last tick (someone left): look for free partitions now.
      else this.tickAgain = true
    }
    if (this.hooks.wantsPartitions()) this.shedExcess()
  }

  /** Takes up to `need` of the free partitions, from a random one on (consumers taking at once collide less). */
  private async grant(free: number[], need: number): Promise<void> {
    if (free.length === 0) return
    const start = Math.floor(Math.random() * free.length)
    const chosen = Array.from({ length: Math.min(need, free.length) }, (_, k) => {
      return free[(start + k) % free.length] as number
    })
    const sentAt = performance.now()
    const granted = await this.engine.grant(chosen, (late) => {
      // Granted after the bound: nobody counts on them; give them back at once.
      this.giveBack(late)
    })
    // Another consumer took some of them first: look for the next free ones now, not a tick later.
    if (granted.length < chosen.length && free.length > chosen.length) this.tickAgain = true
    let changed = false
    for (const p of granted) {
      p.validUntil = sentAt + this.config.leaseMs
      if (!this.hooks.wantsPartitions() || this.stopped) {
        // Granted by a tick sent before the stop began: given back at once.
        this.giveBack([p])
        continue
      }
      this.partitionsById.set(p.index, p)
      changed = true
    }
    if (changed) this.hooks.changed()
  }

  /** More than the quota (a consumer joined): hand the least busy partitions over. */
  private shedExcess(): void {
    const active = this.owned().filter((p) => p.state === 'active')
    const excess = active.length - this.quota
    if (excess <= 0) return
    active.sort((a, b) => a.running - b.running || b.index - a.index)
    for (const p of active.slice(0, excess)) this.handover(p)
  }

  /** A lease not confirmed within leaseMs (a paused process, a silent storage) is lost, before any handler starts under it. */
  expireLocally(): void {
    const now = performance.now()
    for (const p of this.owned()) {
      if (now >= p.validUntil) this.lose(p, 'no renewal was confirmed within leaseMs')
    }
  }

  /** Whether a handler may start under `p`'s lease now. */
  mayStart(p: P): boolean {
    if (p.state !== 'active') return false
    if (performance.now() >= p.validUntil) {
      this.lose(p, 'no renewal was confirmed within leaseMs')
      return false
    }
    return true
  }

  lose(p: P, why: string): void {
    if (p.state === 'gone') return
    p.state = 'gone'
    if (this.partitionsById.get(p.index) === p) this.partitionsById.delete(p.index)
    this.leasesLost++
    const error = this.engine.leaseLost(
      p,
      `${this.engine.name} bus: consumer ${this.config.id} lost partition ${p.index} of ${this.config.aggregate} (fence ${p.fence}): ${why}.`,
    )
    p.lost.abort(error)
    p.yielding.abort(error)
    this.hooks.changed()
  }

  handover(p: P): void {
    if (p.state !== 'active') return
    p.state = 'handover'
    p.yielding.abort()
    if (p.running === 0) this.giveBack([p])
  }

  /** {@link release}, tracked until it is done (see {@link settled}). */
  giveBack(parts: P[]): void {
    const releasing = this.release(parts, false)
    this.givingBack.add(releasing)
    void releasing.finally(() => this.givingBack.delete(releasing))
  }

  /** Gives partitions back at once (bounded); not released, their leases run out within leaseMs. */
  async release(parts: P[], leaving: boolean): Promise<number> {
    if (parts.length === 0 && !leaving) return 0
    for (const p of parts) {
      if (p.state === 'gone') continue
      p.state = 'gone'
      if (this.partitionsById.get(p.index) === p) this.partitionsById.delete(p.index)
      p.yielding.abort()
    }
    this.hooks.changed()
    try {
      const count = await this.engine.release(parts, leaving)
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
