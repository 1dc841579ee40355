import { LeaseLostError } from '../../errors.js'
import { bounded } from '../bounded.js'
import type { ConsumerConfig } from './config.js'
import { FENCE_TTL_MS, GROUP } from './keys.js'
import { commandStep, type Outcome, runByNode, type Step, scriptStep } from './nodes.js'
import { OwnedPartition } from './partition.js'
import { busScripts } from './scripts.js'

/** What membership tells the rest of its consumer. */
export interface MembershipHooks {
  /** Whether the consumer still takes partitions (false once its stop began). */
  wantsPartitions(): boolean
  /** The set of owned partitions changed, or one became idle: wake the reader, re-check a stop. */
  changed(): void
  /** A tick ended (subscriptions that failed are asked again). */
  ticked(): void
  report(error: unknown): void
}

/**
 * A consumer's share of the partitions: one tick every leaseMs / 3 (and when
 * the membership's channel says someone joined, left or gave partitions
 * back) joins the members and learns the quota (⌈partitions / live⌉) in the
 * membership's slot, renews the leases it holds and, while short of the
 * quota, looks for free partitions and takes them, each in its partition's
 * slot, all sent in one pipeline per node; local expiry
 * loses a lease whose renewal was not confirmed within leaseMs, before any
 * handler starts under it. Every round trip is bounded by connectTimeoutMs.
 */
export class Membership {
  readonly partitionsById: Map<number, OwnedPartition> = new Map()
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
      await this.tickOnce()
      this.hooks.ticked()
    } while (this.tickAgain && !this.stopped)
  }

  /**
   * Resolves once the tick in flight has ended and every partition it or a
   * handover gave back is released (each round trip bounded): after a stop,
   * nothing of this consumer's is left in Redis, not even a lease a tick sent
   * before the stop was granted.
   */
  async settled(): Promise<void> {
    await this.ticking?.catch(() => {})
    await Promise.all([...this.givingBack])
  }

  private async tickOnce(): Promise<void> {
    this.expireLocally()
    const { redis, keys, leaseMs, partitions, connectTimeoutMs, id } = this.config
    const held = this.owned()
    const want = this.hooks.wantsPartitions()
    // Free partitions are looked for only while short of the quota (or before it is known).
    const probing = want && (this.quota === 0 || held.length < this.quota)
    const steps: Step[] = [
      scriptStep(busScripts.members, [keys.members], [id, leaseMs, want ? 1 : 0, keys.ctl]),
    ]
    for (const p of held) steps.push(scriptStep(busScripts.renew, [p.own], [p.token, leaseMs]))
    const probed: number[] = []
    if (probing) {
      const mine = new Set(held.map((p) => p.index))
      for (let index = 0; index < partitions; index++) {
        if (mine.has(index)) continue
        const own = keys.partition(index).own
        probed.push(index)
        steps.push(commandStep(own, 'exists', own))
      }
    }
    const sentAt = performance.now()
    const outcomes = await runByNode(redis, 'tick', connectTimeoutMs, steps)
    this.reportFirst(outcomes)
    held.forEach((p, k) => {
      const outcome = outcomes[1 + k] as Outcome
      if (p.state === 'gone' || !outcome.ok) return // unconfirmed: the local lease clock decides
      if (outcome.value === 1) p.validUntil = sentAt + leaseMs
      else this.lose(p, 'its lease ended before it was renewed')
    })
    const members = outcomes[0] as Outcome
    if (!members.ok) return
    this.live = Number(members.value)
    this.quota = Math.ceil(partitions / Math.max(1, this.live))
    const need = this.quota - this.partitionsById.size
    if (want && need > 0) {
      if (probing)
        await this.grant(
          probed.filter((_, k) => isFree(outcomes[1 + held.length + k])),
          need,
        )
      // The quota grew since the last tick (someone left): look for free partitions now.
      else this.tickAgain = true
    }
    if (this.hooks.wantsPartitions()) this.shedExcess()
  }

  /** Takes up to `need` of the free partitions, from a random one on (consumers taking at once collide less). */
  private async grant(free: number[], need: number): Promise<void> {
    if (free.length === 0) return
    const { redis, keys, leaseMs, connectTimeoutMs, id } = this.config
    const start = Math.floor(Math.random() * free.length)
    const chosen = Array.from({ length: Math.min(need, free.length) }, (_, k) => {
      return free[(start + k) % free.length] as number
    })
    const steps = chosen.map((index) => {
      const p = keys.partition(index)
      return scriptStep(
        busScripts.grant,
        [p.own, p.fence, p.stream],
        [id, leaseMs, FENCE_TTL_MS, GROUP],
      )
    })
    const sentAt = performance.now()
    const grantsOf = (replies: ReadonlyMap<number, Outcome>, validUntil: number) => {
      const out: OwnedPartition[] = []
      for (const [k, outcome] of replies) {
        const fence = outcome.ok ? Number(outcome.value) : 0
        if (fence > 0)
          out.push(new OwnedPartition(chosen[k] as number, fence, id, keys, validUntil))
      }
      return out
    }
    const outcomes = await runByNode(redis, 'tick', connectTimeoutMs, steps, (late) => {
      // Granted after the bound: nobody counts on them; give them back at once.
      this.giveBack(grantsOf(late, 0))
    })
    this.reportFirst(outcomes)
    const granted = grantsOf(new Map(outcomes.map((outcome, k) => [k, outcome])), sentAt + leaseMs)
    for (const p of granted) {
      if (!this.hooks.wantsPartitions() || this.stopped) {
        // Granted by a tick sent before the stop began: given back at once.
        this.giveBack([p])
        continue
      }
      this.partitionsById.set(p.index, p)
    }
    if (granted.length > 0) this.hooks.changed()
  }

  private reportFirst(outcomes: readonly Outcome[]): void {
    const failed = outcomes.find((outcome) => !outcome.ok)
    if (failed !== undefined && !failed.ok) this.hooks.report(failed.error)
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
    if (p.running === 0) this.giveBack([p])
  }

  /** {@link release}, tracked until it is done (see {@link settled}). */
  private giveBack(parts: OwnedPartition[]): void {
    const releasing = this.release(parts, false)
    this.givingBack.add(releasing)
    void releasing.finally(() => this.givingBack.delete(releasing))
  }

  /** Gives partitions back at once (bounded); not released, their leases run out within leaseMs. */
  async release(parts: OwnedPartition[], leaving: boolean): Promise<number> {
    const { redis, keys, connectTimeoutMs, id } = this.config
    if (parts.length === 0 && !leaving) return 0
    for (const p of parts) {
      if (p.state === 'gone') continue
      p.state = 'gone'
      if (this.partitionsById.get(p.index) === p) this.partitionsById.delete(p.index)
      p.yielding.abort()
    }
    this.hooks.changed()
    try {
      const outcomes = await runByNode(
        redis,
        'release',
        connectTimeoutMs,
        parts.map((p) => scriptStep(busScripts.release, [p.own, p.stream, p.keys.idle], [p.token])),
      )
      this.reportFirst(outcomes)
      const count = outcomes.filter((outcome) => outcome.ok && outcome.value === 1).length
      this.released += count
      if (count > 0 || leaving) {
        // The others take them now, not a lease later.
        await bounded('release', connectTimeoutMs, () =>
          busScripts.released.run(redis, [keys.members], [id, keys.ctl, leaving ? 1 : 0]),
        )
      }
      return count
    } catch (error) {
      this.hooks.report(error)
      return 0
    } finally {
      this.hooks.changed()
    }
  }
}

function isFree(outcome: Outcome | undefined): boolean {
  return outcome?.ok === true && outcome.value === 0
}
