import { shareReadings } from '@vega/job-core'
import type { NamedAggregate } from '../named-aggregate.js'
import type { AggregateStats, SchedulingStats } from '../stats.js'
import { LatencyHistogram } from './histogram.js'
import { NamedMemo } from './named-memo.js'

/**
 * Live figures of one named aggregate. One per aggregate, never per id or
 * group. Only monotonic counts are kept, each updated in place by one `++`
 * at its edge; `queued`, `inFlight`, `dropped` and `pending` are derived
 * from them when read (by `stats()` and at the rare drain check), so an
 * exchange's way through costs three increments, a comparison for the wait
 * and one histogram sample.
 */
export class AggregateCounters {
  readonly contextName: string
  readonly aggregateName: string
  /** The named aggregate these figures are for (what its scheduler is looked up by). */
  readonly aggregate: NamedAggregate
  dispatched = 0
  started = 0
  completed = 0
  failed = 0
  /** Left a queue without starting (withdrawn, dropped by a force stop). */
  left = 0
  /** Withdrawn after it started and before its body ran (a cancelled task). */
  abandoned = 0
  longestGroupWait = 0
  lastDrain: number | undefined = undefined
  drainRecorded = true
  readonly latency: LatencyHistogram = new LatencyHistogram()

  constructor(contextName: string, aggregateName: string) {
    this.contextName = contextName
    this.aggregateName = aggregateName
    this.aggregate = Object.freeze({ contextName, aggregateName })
  }

  get queued(): number {
    return this.dispatched - this.started - this.left
  }

  get inFlight(): number {
    return this.started - this.completed - this.failed - this.abandoned
  }

  get dropped(): number {
    return this.left + this.abandoned
  }

  get pending(): number {
    return this.dispatched - this.left - this.completed - this.failed - this.abandoned
  }
}

/**
 * Per named aggregate counters shared by the standalone dispatcher and the
 * job-runtime backend. The map is keyed by `context.Aggregate`, so its size is
 * the number of aggregate types, whatever the number of ids.
 */
export class StatsRecorder {
  private readonly byAggregate = new Map<string, AggregateCounters>()
  // Counters are never removed, so the memo never needs clearing.
  private readonly memo = new NamedMemo<AggregateCounters>()
  private drainStartedAt: number | undefined = undefined
  readonly now: () => number
  /**
   * The clock reading of an edge on a hot path: an admission, the end of one
   * exchange (which is the start of the next), a release. Reading the system
   * clock (`performance.now()`, with Node's receiver check) costs as much as
   * the rest of an exchange's bookkeeping, and a burst of `dispatch()` calls,
   * or the reactions of groups whose handlers settled together, run in one
   * synchronous stretch; so with the default clock consecutive edges share
   * one reading (`shareReadings`). A figure is then off by at most the time
   * those edges' synchronous work took, which is time the event loop was
   * blocked anyway. A custom clock is read every time: it is cheap, and a
   * test may move it between two calls.
   */
  readonly sharedNow: () => number

  /** `shareStamps`: the clock is the system's (default: only when it is {@link defaultNow}). */
  constructor(now: () => number, shareStamps: boolean = now === defaultNow) {
    this.now = now
    this.sharedNow = shareStamps ? shareReadings(now) : now
  }

  counters(aggregate: NamedAggregate): AggregateCounters {
    const contextName = aggregate.contextName
    const aggregateName = aggregate.aggregateName
    const memoized = this.memo.get(contextName, aggregateName)
    if (memoized !== undefined) return memoized
    const counters = this.keyedCounters(aggregate)
    this.memo.set(contextName, aggregateName, counters)
    return counters
  }

  private keyedCounters(aggregate: NamedAggregate): AggregateCounters {
    const key = `${aggregate.contextName}\u001f${aggregate.aggregateName}`
    let counters = this.byAggregate.get(key)
    if (counters === undefined) {
      counters = new AggregateCounters(aggregate.contextName, aggregate.aggregateName)
      this.byAggregate.set(key, counters)
    }
    return counters
  }

  admitted(counters: AggregateCounters): void {
    counters.dispatched++
  }

  started(counters: AggregateCounters, waitedMs: number): void {
    counters.started++
    if (waitedMs > counters.longestGroupWait) counters.longestGroupWait = waitedMs
  }

  /** A queued entry that left without running (withdrawn, dropped by a force stop). */
  left(counters: AggregateCounters): void {
    counters.left++
    this.settledOne(counters)
  }

  /** An in-flight entry withdrawn before its body ran (a cancelled task). */
  abandoned(counters: AggregateCounters): void {
    counters.abandoned++
    this.settledOne(counters)
  }

  finished(counters: AggregateCounters, durationMs: number | undefined, ok: boolean): void {
    if (ok) counters.completed++
    else counters.failed++
    if (durationMs !== undefined) counters.latency.record(durationMs)
    // Only while a drain is being timed (one flag read otherwise).
    if (!counters.drainRecorded) this.settledOne(counters)
  }

  /** Intake closed: from now on, each aggregate's drain time is measured. */
  drainStarted(): void {
    if (this.drainStartedAt !== undefined) return
    this.drainStartedAt = this.now()
    for (const counters of this.byAggregate.values()) {
      counters.drainRecorded = false
      this.settledOne(counters)
    }
  }

  snapshot(name: string, groups: number): SchedulingStats {
    const aggregates: AggregateStats[] = []
    for (const c of this.byAggregate.values()) {
      aggregates.push({
        aggregate: `${c.contextName}.${c.aggregateName}`,
        contextName: c.contextName,
        aggregateName: c.aggregateName,
        queued: c.queued,
        inFlight: c.inFlight,
        dispatched: c.dispatched,
        completed: c.completed,
        failed: c.failed,
        dropped: c.dropped,
        latency: c.latency.summary(),
        longestGroupWait: c.longestGroupWait,
        lastDrain: c.lastDrain,
      })
    }
    return { name, at: this.now(), groups, aggregates }
  }

  private settledOne(counters: AggregateCounters): void {
    if (counters.drainRecorded || this.drainStartedAt === undefined || counters.pending > 0) return
    counters.drainRecorded = true
    counters.lastDrain = this.now() - this.drainStartedAt
  }
}

// Read once: in Node, globalThis.performance is a lazy accessor, and
// calling it on every clock reading cost as much as the reading itself.
let performanceClock: { now(): number } | undefined

/** The default clock of latency and wait figures: `performance.now()` (`Date.now()` without it), in ms. */
export function defaultNow(): number {
  performanceClock ??= globalThis.performance
  return performanceClock === undefined ? Date.now() : performanceClock.now()
}
