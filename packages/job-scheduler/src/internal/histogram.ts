import type { LatencySummary } from '../stats.js'

// Eight buckets per power of two: about 9 % relative error, a fixed
// 264-slot array however many samples arrive (memory must not grow with
// traffic or with the number of aggregate ids).
const SUB_BUCKETS = 8
const BUCKETS = 33 * SUB_BUCKETS

/**
 * A log-bucketed latency histogram in milliseconds. Quantiles are reported
 * as their bucket's upper bound, clamped to the exact maximum, so
 * `p50 ≤ p99 ≤ max` always holds.
 */
export class LatencyHistogram {
  private readonly counts = new Uint32Array(BUCKETS)
  private total = 0
  private maximum = 0

  record(ms: number): void {
    const value = ms > 0 && Number.isFinite(ms) ? ms : 0
    this.counts[bucketOf(value)]!++
    this.total++
    if (value > this.maximum) this.maximum = value
  }

  summary(): LatencySummary {
    return {
      count: this.total,
      p50: this.quantile(0.5),
      p99: this.quantile(0.99),
      max: this.maximum,
    }
  }

  private quantile(q: number): number {
    if (this.total === 0) return 0
    const rank = Math.ceil(q * this.total)
    let seen = 0
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!
      if (seen >= rank) return Math.min(upperBound(i), this.maximum)
    }
    return this.maximum
  }
}

function bucketOf(ms: number): number {
  const index = Math.ceil(Math.log2(ms + 1) * SUB_BUCKETS)
  return index < BUCKETS ? index : BUCKETS - 1
}

function upperBound(index: number): number {
  return 2 ** (index / SUB_BUCKETS) - 1
}
