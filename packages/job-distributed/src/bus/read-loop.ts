import { pause } from '../internal/bus/pause.js'
import type { BusEntry, BusPartition, BusReader, BusReaderContext } from './bus-engine.js'

/**
 * An engine's reading loop, the part every engine shares: it reads a
 * partition again when a send woke it, when its last read came back full,
 * and every `blockMs` all of them (the safety net for a wake-up not heard);
 * otherwise it waits. It stops reading while `highWater` messages are
 * outstanding, and backs off `blockMs` after a failed read. An engine
 * subclasses it with its {@link read} (and, to take over a previous owner's
 * pending messages first, {@link takeOver}).
 *
 * @example
 * ```ts
 * class Reader extends BusReadLoop<PostgresPartition, PostgresEntry> {
 *   protected async read(due: PostgresPartition[]): Promise<boolean> {
 *     for (const [p, entry] of await fetchAfterCursors(due)) this.handOut(p, entry)
 *     return true
 *   }
 * }
 * ```
 */
export abstract class BusReadLoop<P extends BusPartition, E extends BusEntry>
  implements BusReader<P>
{
  /** Messages read and not yet settled. */
  outstanding = 0
  readonly highWater: number
  readonly blockMs: number
  readonly finished: Promise<void>
  /** When every partition was last marked for reading (the safety net). */
  private sweptAt = performance.now()
  /** It stopped reading at the high-water mark. */
  private full = false
  private sleeper: (() => void) | undefined
  private reading = true

  constructor(
    protected readonly context: BusReaderContext<P, E>,
    settings: { readonly leaseMs: number; readonly parallelism: number },
  ) {
    this.blockMs = Math.max(10, Math.min(1000, Math.floor(settings.leaseMs / 3)))
    this.highWater = Math.max(256, settings.parallelism * 32)
    // Started once the subclass is built (its fields are set after this constructor).
    this.finished = Promise.resolve().then(() => this.loop())
  }

  /**
   * Reads the partitions due and hands their messages out ({@link handOut}),
   * in order; marks each read up to its wake-ups unless it came back full.
   * → false when a step failed (the loop backs off).
   */
  protected abstract read(due: P[]): Promise<boolean>

  /** Takes over a previous owner's pending messages before any new one. → whether it had any to take over (the loop turns again at once). */
  protected takeOver(_parts: P[]): Promise<boolean> {
    return Promise.resolve(false)
  }

  /** One message read from `p`: to the handling, in order. */
  protected handOut(p: P, entry: E): void {
    p.outstanding++
    this.outstanding++
    this.context.dispatch(p, entry)
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

  /** A send woke `p` (or its wake-ups were established again): read it again. */
  woke(p: P): void {
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
        if (await this.takeOver(parts)) continue
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
        if (!(await this.read(due))) await pause(this.blockMs)
      } catch (error) {
        if (!this.reading) return
        this.context.report(error)
        await pause(this.blockMs)
      }
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
