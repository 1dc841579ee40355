import type { LatencySummary } from '../stats.js'

// Sixteen linear sub-buckets per power of two of (ms + 1): at most 6.25 %
// relative width, and a fixed 33 × 16-slot array however many samples
// arrive (memory must not grow with traffic or with the number of ids).
const SUB_BITS = 4
const SUB_BUCKETS = 1 << SUB_BITS
const OCTAVES = 33
// Slot 0 counts samples of exactly 0 ms (a test clock that does not move),
// so that they read as 0, not as the first bucket's bound.
const BUCKETS = 1 + OCTAVES * SUB_BUCKETS

// Samples whose `ms + 1` reaches 2^31 (about 25 days) are bucketed from
// their float64 bits (exponent and top mantissa bits); every other sample,
// that is all of them in practice, with integer operations that give the
// same bucket without a store and a load through a typed array, which cost
// as much as the rest of an exchange's figures.
const float = new Float64Array(1)
const words = new Uint32Array(float.buffer)
// The word holding the sign, exponent and top mantissa bits.
const HIGH = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0
const INTEGER_RANGE = 2 ** 31

/**
 * A log-linear latency histogram in milliseconds. Quantiles are reported as
 * their bucket's upper bound, clamped to the exact maximum, so
 * `p50 ≤ p99 ≤ max` always holds.
 */
export class LatencyHistogram {
  private readonly counts = new Uint32Array(BUCKETS)
  private total = 0
  private maximum = 0

  record(ms: number): void {
    const value = ms > 0 && ms < Number.POSITIVE_INFINITY ? ms : 0
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

/** 0 for 0 ms; otherwise `ms + 1` is in `[2^e, 2^(e+1))` with top mantissa bits `m`: bucket `1 + e·16 + m`. */
export function bucketOf(ms: number): number {
  if (ms === 0) return 0
  const x = ms + 1
  if (!(x < INTEGER_RANGE)) return bucketOfLarge(x)
  // 1 ≤ x < 2^31: clz32 reads floor(x), whose top bit is x's exponent e.
  const e = 31 - Math.clz32(x)
  // m = floor(x · 2^(4-e)) - 16, exactly: for e ≥ 4 the buckets are whole
  // numbers wide, so floor(x)'s bits below the top one decide; below, x is
  // scaled by a power of two (exact) into [16, 32).
  const m =
    e >= SUB_BITS
      ? (x >>> (e - SUB_BITS)) & (SUB_BUCKETS - 1)
      : (x * (1 << (SUB_BITS - e))) & (SUB_BUCKETS - 1)
  return 1 + e * SUB_BUCKETS + m
}

function bucketOfLarge(x: number): number {
  float[0] = x
  const high = words[HIGH]!
  const index =
    1 + ((high >>> 20) - 1023) * SUB_BUCKETS + ((high >>> (20 - SUB_BITS)) & (SUB_BUCKETS - 1))
  return index < BUCKETS ? index : BUCKETS - 1
}

/** The largest ms the bucket holds (exclusive bound; slot 0 holds exactly 0). */
export function upperBound(index: number): number {
  if (index === 0) return 0
  const octave = (index - 1) >> SUB_BITS
  const sub = (index - 1) & (SUB_BUCKETS - 1)
  return 2 ** octave * (1 + (sub + 1) / SUB_BUCKETS) - 1
}
