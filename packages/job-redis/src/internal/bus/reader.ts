import { type BusReaderContext, BusReadLoop } from '@vega/job-distributed'
import type { RedisClient } from '../redis-io.js'
import { GROUP } from './keys.js'
import { type Outcome, runByNode, sameSlotBatches, scriptStep } from './nodes.js'
import type { RedisEntry, RedisPartition } from './partition.js'
import { busScripts } from './scripts.js'

/** One entry as XREADGROUP / XAUTOCLAIM return it: id and a flat field/value list. */
export type RawEntry = [string, string[]]

/** What READ returns for a batch of partitions: the lost ones (1-based), and the XREADGROUP reply. */
type ReadReply = [number[], [string, RawEntry[]][] | null]

/** What CLAIM returns for one partition: lost, or the next cursor, the entries and their delivery counts. */
type ClaimReply = [0] | [1, string, RawEntry[], number[]]

/** What a reader is made with. */
export interface ReaderConfig {
  readonly redis: RedisClient
  readonly id: string
  readonly leaseMs: number
  readonly connectTimeoutMs: number
  readonly parallelism: number
}

function field(fields: readonly string[], name: string): string {
  for (let i = 0; i < fields.length; i += 2) if (fields[i] === name) return fields[i + 1] ?? ''
  return ''
}

/** A stream entry as a handler gets it: the id and body fields, its first attempt here. */
function entryOf([entryId, fields]: RawEntry, attempt: number): RedisEntry {
  return { id: field(fields, 'i'), entryId, body: field(fields, 'b'), attempt }
}

/**
 * A consumer's reading: first takes over each new partition's pending
 * entries (a previous owner's), then reads new entries of the partitions it
 * owns, fenced on the server: one XREADGROUP over all of them on one
 * primary, one per partition on a cluster (a partition is one slot;
 * XREADGROUP over several slots is refused there), sent in one pipeline per
 * node. It reads a partition again when a send woke it (its
 * sharded channel), when its last read came back full, and every blockMs
 * all of them (the safety net for a wake-up not heard); otherwise it waits.
 * It stops reading while `highWater` messages are outstanding. Every round
 * trip is bounded by connectTimeoutMs; a read that answers after its bound
 * is still taken, in order.
 */
export class Reader extends BusReadLoop<RedisPartition, RedisEntry> {
  constructor(
    private readonly config: ReaderConfig,
    context: BusReaderContext<RedisPartition, RedisEntry>,
  ) {
    super(context, config)
  }

  /** New partitions first hand out their pending entries (a previous owner's), before any new read. */
  protected override async takeOver(parts: RedisPartition[]): Promise<boolean> {
    const claiming = parts.filter((p) => p.claiming)
    if (claiming.length === 0) return false
    await this.claim(claiming)
    return true
  }

  /**
   * Takes over the partitions' pending entries (a previous owner's), in
   * stream order, before any new one. A claim that times out is asked again
   * from the same cursor: entries it moved to this consumer are still pending.
   */
  private async claim(parts: RedisPartition[]): Promise<void> {
    const outcomes = await runByNode(
      this.config.redis,
      'claim',
      this.config.connectTimeoutMs,
      parts.map((p) =>
        scriptStep(
          busScripts.claim,
          [p.own, p.stream],
          [p.token, GROUP, this.config.id, p.claimCursor, 256],
        ),
      ),
    )
    let failed: unknown
    parts.forEach((p, k) => {
      const outcome = outcomes[k] as Outcome
      if (!outcome.ok) {
        failed ??= outcome.error
        return
      }
      const reply = outcome.value as ClaimReply
      if (reply[0] === 0) {
        this.context.lose(p, 'a newer owner holds it')
        return
      }
      const [, next, entries, counts] = reply
      if (p.state === 'active') {
        entries.forEach((entry, j) => {
          this.handOut(p, entryOf(entry, Number(counts[j] ?? 1)))
        })
      }
      p.claimCursor = next
      if (next === '0-0') p.claiming = false
    })
    if (failed !== undefined) throw failed
  }

  /** Reads the partitions due; → false when a step failed (the loop backs off). */
  protected async read(due: RedisPartition[]): Promise<boolean> {
    const { redis, connectTimeoutMs, leaseMs, id } = this.config
    const room = this.highWater - this.outstanding
    const count = Math.max(1, Math.min(512, Math.ceil(room / due.length)))
    const marks = new Map(due.map((p) => [p, p.wakes]))
    const batches = sameSlotBatches(redis, due)
    const steps = batches.map((batch) => {
      const keys: string[] = []
      const args: (string | number)[] = [GROUP, id, count, leaseMs]
      for (const p of batch) {
        keys.push(p.own, p.stream, p.keys.idle)
        args.push(p.token)
      }
      return scriptStep(busScripts.read, keys, args)
    })
    // A reply that comes after the bound is still taken, in order (one
    // connection answers in order, so before any later read's): the entries
    // it moved to this consumer are handled, not left pending unseen.
    const outcomes = await runByNode(redis, 'read', connectTimeoutMs, steps, (late) => {
      for (const [k, outcome] of late)
        this.take(batches[k] as RedisPartition[], outcome, undefined, count)
    })
    let ok = true
    batches.forEach((batch, k) => {
      const outcome = outcomes[k] as Outcome
      if (!outcome.ok && ok) this.context.report(outcome.error)
      ok &&= outcome.ok
      this.take(batch, outcome, marks, count)
    })
    return ok
  }

  /**
   * Hands out what one read returned for a batch of partitions; marks a
   * partition read up to its mark unless it came back full (a late reply
   * marks nothing).
   */
  private take(
    batch: readonly RedisPartition[],
    outcome: Outcome,
    marks: ReadonlyMap<RedisPartition, number> | undefined,
    count: number,
  ): void {
    if (!outcome.ok) return
    const [lost, reply] = outcome.value as ReadReply
    for (const index of lost) {
      this.context.lose(batch[index - 1] as RedisPartition, 'a newer owner holds it')
    }
    const byStream = new Map(reply ?? [])
    batch.forEach((p, k) => {
      if (lost.includes(k + 1)) return
      const entries = byStream.get(p.stream) ?? []
      // Read after a handover began, or after the lease was lost: left pending for the next owner.
      if (p.state === 'active') for (const entry of entries) this.handOut(p, entryOf(entry, 1))
      const mark = marks?.get(p)
      if (mark !== undefined && entries.length < count && p.readUpTo < mark) p.readUpTo = mark
    })
  }
}
