import type { BusReader, BusReaderContext } from '@vega/job-distributed'
import { pause } from './io.js'
import type { PostgresEntry, PostgresPartition } from './partition.js'
import type { PostgresBusStore } from './store.js'

/** What a reader is made with. */
export interface ReaderConfig {
  readonly store: PostgresBusStore
  readonly aggregate: string
  readonly id: string
  readonly leaseMs: number
  readonly parallelism: number
}

/**
 * A consumer's reading: the messages after each owned partition's cursor,
 * in seq (commit) order, all due partitions in one statement that checks
 * their leases. A new owner's cursor starts at 0: what a previous owner
 * read and did not acknowledge comes first. It reads a partition again when
 * a send woke it (NOTIFY), when its last read came back full, and every
 * blockMs all of them (the safety net for a wake-up not heard); otherwise
 * it waits. It stops reading while `highWater` messages are outstanding.
 */
export class Reader implements BusReader<PostgresPartition> {
  /** Messages read and not yet settled. */
  outstanding = 0
  readonly highWater: number
  readonly blockMs: number
  /** When every partition was last marked for reading (the safety net). */
  private sweptAt = performance.now()
  /** It stopped reading at the high-water mark. */
  private full = false
  private sleeper: (() => void) | undefined
  private reading = true
  readonly finished: Promise<void>

  constructor(
    private readonly config: ReaderConfig,
    private readonly context: BusReaderContext<PostgresPartition, PostgresEntry>,
  ) {
    this.blockMs = Math.max(10, Math.min(1000, Math.floor(config.leaseMs / 3)))
    this.highWater = Math.max(256, config.parallelism * 32)
    this.finished = this.loop()
  }

  /** Reads nothing more (a stop began); the loop ends at its next turn. */
  stop(): void {
    this.reading = false
    this.poke()
  }

  /** One message settled: reading goes on if it had stopped at the high-water mark. */
  settled(): void {
    this.outstanding--
    if (this.full && this.outstanding <= this.highWater / 2) {
      this.full = false
      this.poke()
    }
  }

  /** A send woke `p` (or the LISTEN connection came back): read it again. */
  woke(p: PostgresPartition): void {
    p.wakes++
    this.poke()
  }

  /** Wakes the loop from its wait. */
  poke(): void {
    const sleeper = this.sleeper
    this.sleeper = undefined
    sleeper?.()
  }

  private async loop(): Promise<void> {
    while (this.reading) {
      const parts = this.context.owned().filter((p) => p.state === 'active')
      try {
        const now = performance.now()
        if (now - this.sweptAt >= this.blockMs) {
          // Every blockMs every partition is read (a wake-up may have been missed).
          this.sweptAt = now
          for (const p of parts) p.wakes++
        }
        const due = parts.filter((p) => p.wakes !== p.readUpTo)
        if (this.outstanding >= this.highWater) {
          this.full = true
          await this.sleep()
          continue
        }
        if (due.length === 0) {
          await this.sleep()
          continue
        }
        await this.read(due)
      } catch (error) {
        if (!this.reading) return
        this.context.report(error)
        await pause(this.blockMs)
      }
    }
  }

  /** Reads the partitions due and hands their messages out, in seq order. */
  private async read(due: PostgresPartition[]): Promise<void> {
    const { store, aggregate, id } = this.config
    const room = this.highWater - this.outstanding
    const count = Math.max(1, Math.min(512, Math.ceil(room / due.length)))
    const marks = new Map(due.map((p) => [p, p.wakes]))
    const reply = await store.read(aggregate, id, due, count)
    for (const p of reply.lost) this.context.lose(p, 'a newer owner holds it')
    for (const p of due) {
      if (reply.lost.includes(p)) continue
      const messages = reply.messages.get(p) ?? []
      // Read after a handover began, or after the lease was lost: left for the next owner.
      if (p.state === 'active') {
        for (const message of messages) {
          p.after = Math.max(p.after, message.seq)
          p.outstanding++
          this.outstanding++
          this.context.dispatch(p, message)
        }
      }
      const mark = marks.get(p) as number
      if (messages.length < count && p.readUpTo < mark) p.readUpTo = mark
    }
  }

  /** Waits until poked, or until the next sweep is due. */
  private sleep(): Promise<void> {
    const wake = new AbortController()
    this.sleeper = () => wake.abort()
    const left = this.sweptAt + this.blockMs - performance.now()
    return pause(Math.max(1, left), wake.signal)
  }
}
