/**
 * A small latency histogram in milliseconds (buckets at most 6.25 % wide).
 * Always `p50 ≤ p99 ≤ max`; all zero before the first sample.
 *
 * @example
 * ```ts
 * const { count, p50, p99, max }: LatencySummary = dispatcher.stats().aggregates[0]!.latency
 * ```
 */
export interface LatencySummary {
  readonly count: number
  readonly p50: number
  readonly p99: number
  readonly max: number
}

/**
 * The figures of one named aggregate — what the seed says to observe before
 * tuning any `parallelism`. Labelled by named aggregate only, never by
 * group key or aggregate id, so they stay small however many ids flow.
 *
 * @example
 * ```ts
 * for (const a of dispatcher.stats().aggregates) {
 *   console.log(a.aggregate, a.queued, a.inFlight, a.latency.p99, a.longestGroupWait)
 * }
 * ```
 */
export interface AggregateStats {
  /** `"context.Aggregate"`. */
  readonly aggregate: string
  readonly contextName: string
  readonly aggregateName: string
  /** Waiting in a group queue now. */
  readonly queued: number
  /** Handed to the aggregate's scheduler and not settled yet. */
  readonly inFlight: number
  /** Admitted since creation. */
  readonly dispatched: number
  /** Settled successfully. */
  readonly completed: number
  /** Settled with an error. */
  readonly failed: number
  /** Left a queue without running (withdrawn, or dropped by a force stop). */
  readonly dropped: number
  /** Handler (or task body) duration, ms. */
  readonly latency: LatencySummary
  /** The longest time, in ms, anything of this aggregate waited in a group queue before it started. */
  readonly longestGroupWait: number
  /** How long, in ms, the last drain took (intake closed → nothing queued or in flight); `undefined` before any drain. */
  readonly lastDrain: number | undefined
}

/**
 * A snapshot of a dispatcher's (or a runtime integration's) scheduling
 * figures. `groups` is the number of group queues alive now — at most
 * `parallelism`, never the number of ids.
 *
 * @example
 * ```ts
 * const stats: SchedulingStats = dispatcher.stats()
 * console.log(stats.groups, stats.aggregates.length)
 * ```
 */
export interface SchedulingStats {
  readonly name: string
  /** When the snapshot was taken, on the source's clock (ms). */
  readonly at: number
  readonly groups: number
  readonly aggregates: readonly AggregateStats[]
}
