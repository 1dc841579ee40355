import type { NamedAggregate } from '../named-aggregate.js'
import type { AggregateStats, SchedulingStats } from '../stats.js'
import { LatencyHistogram } from './histogram.js'
import { NamedMemo } from './named-memo.js'

/** Live figures of one named aggregate. One per aggregate, never per id or group. */
export class AggregateCounters {
  readonly contextName: string
  readonly aggregateName: string
  queued = 0
  inFlight = 0
  dispatched = 0
  completed = 0
  failed = 0
  dropped = 0
  longestGroupWait = 0
  lastDrain: number | undefined = undefined
  drainRecorded = true
  readonly latency: LatencyHistogram = new LatencyHistogram()

  constructor(contextName: string, aggregateName: string) {
    this.contextName = contextName
    this.aggregateName = aggregateName
  }

  get pending(): number {
    return this.queued + this.inFlight
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

  constructor(now: () => number) {
    this.now = now
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
    counters.queued++
    counters.dispatched++
  }

  started(counters: AggregateCounters, waitedMs: number): void {
    counters.queued--
    counters.inFlight++
    if (waitedMs > counters.longestGroupWait) counters.longestGroupWait = waitedMs
  }

  /** A queued entry that left without running (withdrawn, dropped by a force stop). */
  left(counters: AggregateCounters): void {
    counters.queued--
    counters.dropped++
    this.settledOne(counters)
  }

  /** An in-flight entry withdrawn before its body ran (a cancelled task). */
  abandoned(counters: AggregateCounters): void {
    counters.inFlight--
    counters.dropped++
    this.settledOne(counters)
  }

  finished(counters: AggregateCounters, durationMs: number | undefined, ok: boolean): void {
    counters.inFlight--
    if (ok) counters.completed++
    else counters.failed++
    if (durationMs !== undefined) counters.latency.record(durationMs)
    this.settledOne(counters)
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

export function defaultNow(): number {
  return globalThis.performance?.now() ?? Date.now()
}
