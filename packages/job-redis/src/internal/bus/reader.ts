import type { Redis } from 'ioredis'
import { bounded, pause } from '../bounded.js'
import type { ConsumerConfig } from './config.js'
import { GROUP } from './keys.js'
import type { Membership } from './membership.js'
import type { OwnedPartition } from './partition.js'
import { busScripts } from './scripts.js'

/** One entry as XREADGROUP / XAUTOCLAIM return it: id and a flat field/value list. */
export type RawEntry = [string, string[]]

/** What READ returns: lost partition indexes, the XREADGROUP reply, tails on an empty read, the control stream's tail. */
type ReadReply = [number[], [string, RawEntry[]][] | null, string[], string]

/** Where the reader hands what it read: one entry of an owned partition. */
export type Dispatch = (p: OwnedPartition, entry: RawEntry, attempt: number) => void

/**
 * A consumer's reading: first takes over each new partition's pending
 * entries (a previous owner's), then reads new entries of the partitions it
 * owns, fenced on the server, and blocks on a connection of its own until
 * one gets an entry or the control stream moves. It stops reading while
 * `highWater` messages are outstanding. Every round trip is bounded: a read
 * that does not come back in time loses its partitions (their entries may
 * have been handed to this consumer: the next owner takes them over), a
 * blocking read that hangs past blockMs + connectTimeoutMs is given up.
 */
export class Reader {
  /** Messages read and not yet settled. */
  outstanding = 0
  readonly highWater: number
  readonly blockMs: number
  private readonly blocker: Redis
  private blockerId: number | undefined
  private blocked = false
  private pokes = 0
  private ctlTail = '0-0'
  private sleeper: (() => void) | undefined
  private reading = true
  readonly finished: Promise<void>

  constructor(
    private readonly config: ConsumerConfig,
    private readonly membership: Membership,
    private readonly dispatch: Dispatch,
    private readonly report: (error: unknown) => void,
  ) {
    this.blockMs = Math.max(10, Math.min(1000, Math.floor(config.leaseMs / 3)))
    this.highWater = Math.max(256, config.parallelism * 32)
    // Blocking reads need a connection of their own.
    this.blocker = config.redis.duplicate()
    this.blocker.on('error', () => {})
    this.blocker.on('ready', () => {
      this.blockerId = undefined
      this.blocker.client('ID').then(
        (id) => {
          this.blockerId = Number(id)
        },
        () => {},
      )
    })
    this.finished = this.loop()
  }

  /** Reads nothing more (a stop began); the loop ends at its next turn. */
  stop(): void {
    this.reading = false
    this.poke()
  }

  /** Out of a blocking read at once: its connection closes. */
  close(): void {
    this.stop()
    this.blocker.disconnect()
  }

  /** One message settled: reading may go on if it had stopped at the high-water mark. */
  settled(): void {
    this.outstanding--
    if (this.outstanding <= this.highWater / 2) this.poke()
  }

  /** Wakes the loop: from its idle wait, or out of its blocking read. */
  poke(): void {
    this.pokes++
    const sleeper = this.sleeper
    this.sleeper = undefined
    sleeper?.()
    if (this.blocked && this.blockerId !== undefined) {
      this.config.redis.client('UNBLOCK', this.blockerId).catch(() => {})
    }
  }

  private async loop(): Promise<void> {
    while (this.reading) {
      const parts = this.membership.owned().filter((p) => p.state === 'active')
      const claiming = parts.find((p) => p.claiming)
      try {
        if (claiming !== undefined) {
          await this.claim(claiming)
          continue
        }
        const pokes = this.pokes
        if (parts.length === 0) {
          // Nothing to read: wait for the others to join, leave or give partitions back.
          const [last] = await bounded('read', this.config.connectTimeoutMs, () =>
            this.config.redis.xrevrange(this.config.keys.ctl, '+', '-', 'COUNT', 1),
          )
          this.heard(last?.[0] ?? '0-0')
          if (this.pokes === pokes && this.reading) await this.waitForEntries([])
          continue
        }
        if (this.outstanding >= this.highWater) {
          await this.sleep()
          continue
        }
        const got = await this.read(parts)
        if (got === 0 && this.pokes === pokes && this.reading) await this.waitForEntries(parts)
      } catch (error) {
        if (!this.reading) return
        this.report(error)
        await pause(this.blockMs)
      }
    }
  }

  /**
   * Takes over the partition's pending entries (a previous owner's), in
   * stream order, before any new one. A claim that times out is asked again
   * from the same cursor: entries it moved to this consumer are still pending.
   */
  private async claim(p: OwnedPartition): Promise<void> {
    const reply = (await bounded('claim', this.config.connectTimeoutMs, () =>
      busScripts.claim.run(
        this.config.redis,
        [p.own, p.stream],
        [p.token, GROUP, this.config.id, p.claimCursor, 256],
      ),
    )) as [0] | [1, string, RawEntry[], number[]]
    if (reply[0] === 0) {
      this.membership.lose(p, 'a newer owner holds it')
      return
    }
    const [, next, entries, counts] = reply
    if (p.state === 'active') {
      entries.forEach((entry, k) => {
        this.handOut(p, entry, Number(counts[k] ?? 1))
      })
    }
    p.claimCursor = next
    if (next === '0-0') p.claiming = false
  }

  private async read(parts: OwnedPartition[]): Promise<number> {
    const keys: string[] = []
    const args: (string | number)[] = [GROUP, this.config.id, 0]
    const byStream = new Map<string, OwnedPartition>()
    for (const p of parts) {
      keys.push(p.own, p.stream)
      args.push(p.token)
      byStream.set(p.stream, p)
    }
    const room = this.highWater - this.outstanding
    args[2] = Math.max(1, Math.min(512, Math.ceil(room / parts.length)))
    args.push(this.config.keys.ctl)
    // A reply that comes after the bound is still taken, in order (one
    // connection answers in order, so before any later read's): the entries
    // it moved to this consumer are handled, not left pending unseen.
    const reply = (await bounded(
      'read',
      this.config.connectTimeoutMs,
      () => busScripts.read.run(this.config.redis, keys, args),
      (late) => void this.take(late as ReadReply, parts, byStream),
    )) as ReadReply
    return this.take(reply, parts, byStream)
  }

  /** Hands out what one read returned; → how many entries. */
  private take(
    [lost, result, tails, ctlTail]: ReadReply,
    parts: OwnedPartition[],
    byStream: Map<string, OwnedPartition>,
  ): number {
    const kept = parts.filter((_, k) => !lost.includes(k + 1))
    for (const index of lost) {
      this.membership.lose(parts[index - 1] as OwnedPartition, 'a newer owner holds it')
    }
    let got = 0
    if (result) {
      for (const [stream, entries] of result) {
        const p = byStream.get(stream)
        // Read after a handover began, or after the lease was lost: left pending for the next owner.
        if (p === undefined || p.state !== 'active') continue
        for (const entry of entries) this.handOut(p, entry, 1)
        got += entries.length
      }
    } else {
      kept.forEach((p, k) => {
        p.tail = tails[k] ?? p.tail
      })
    }
    this.heard(ctlTail)
    return got
  }

  private handOut(p: OwnedPartition, entry: RawEntry, attempt: number): void {
    p.outstanding++
    this.outstanding++
    this.dispatch(p, entry, attempt)
  }

  /** The control stream moved on: someone joined, left or gave partitions back; balance now. */
  private heard(ctlTail: string): void {
    if (ctlTail === this.ctlTail) return
    this.ctlTail = ctlTail
    void this.membership.tick()
  }

  /** Blocks on its own connection until an owned partition or the control stream gets an entry, or blockMs passes. */
  private async waitForEntries(parts: OwnedPartition[]): Promise<void> {
    const keys = parts.map((p) => p.stream)
    const ids = parts.map((p) => p.tail)
    keys.push(this.config.keys.ctl)
    ids.push(this.ctlTail)
    this.blocked = true
    try {
      await bounded('read', this.blockMs + this.config.connectTimeoutMs, () =>
        this.blocker.xread('COUNT', 1, 'BLOCK', this.blockMs, 'STREAMS', ...keys, ...ids),
      )
    } finally {
      this.blocked = false
    }
  }

  /** Waits blockMs, or until poked (a message settled below the high-water mark). */
  private sleep(): Promise<void> {
    const wake = new AbortController()
    this.sleeper = () => wake.abort()
    return pause(this.blockMs, wake.signal)
  }
}
