import { describe, expect, it } from 'vitest'
import { bucketOf, LatencyHistogram, upperBound } from '../src/internal/histogram.js'

describe('LatencyHistogram', () => {
  it('puts every sample in a bucket whose bounds hold it, at most 6.25 % wide (in ms + 1)', () => {
    const samples = [
      0, 1e-6, 0.01, 0.5, 0.999, 1, 1.5, 2, 3, 7.99, 8, 10, 100, 1234.5, 65_535, 1e6, 3e9,
    ]
    for (let i = 0; i < 2000; i++) samples.push(Math.random() ** 4 * 10 ** (Math.random() * 7))
    for (const ms of samples) {
      const bucket = bucketOf(ms)
      if (ms === 0) {
        expect([bucket, upperBound(bucket)]).toEqual([0, 0])
        continue
      }
      expect(ms).toBeLessThan(upperBound(bucket))
      expect(ms).toBeGreaterThanOrEqual(upperBound(bucket - 1))
      expect(upperBound(bucket) + 1).toBeLessThanOrEqual((ms + 1) * (1 + 1 / 16) + 1e-9)
    }
  })

  it('buckets every sample as its float64 bits say: exponent and top four mantissa bits of ms + 1', () => {
    // The definition, read off the bits with a DataView.
    const view = new DataView(new ArrayBuffer(8))
    const reference = (ms: number): number => {
      if (ms === 0) return 0
      view.setFloat64(0, ms + 1)
      const high = view.getUint32(0)
      return Math.min(1 + ((high >>> 20) - 1023) * 16 + ((high >>> 16) & 15), 33 * 16)
    }
    const samples: number[] = [
      1e-9,
      0.0625,
      1 / 3,
      14.999,
      15,
      2 ** 31 - 1.5,
      2 ** 31 - 1,
      2 ** 31,
      2 ** 33,
    ]
    // Both sides of every bucket edge, in every octave, and random values.
    for (let e = 0; e <= 33; e++) {
      for (let m = 0; m < 16; m++) {
        const edge = 2 ** e * (1 + m / 16) - 1
        samples.push(edge, edge + 2 ** (e - 40), Math.max(edge - 2 ** (e - 40), 1e-12))
      }
    }
    for (let i = 0; i < 5000; i++) samples.push(Math.random() * 10 ** (Math.random() * 10 - 3))
    for (const ms of samples) expect([ms, bucketOf(ms)]).toEqual([ms, reference(ms)])
  })

  it('clamps samples past its range into the last bucket, and reports the exact maximum', () => {
    const histogram = new LatencyHistogram()
    histogram.record(2 ** 40)
    histogram.record(Number.POSITIVE_INFINITY)
    histogram.record(Number.NaN)
    histogram.record(-5)
    // Slot 0 holds exactly 0 ms; then 33 octaves of 16.
    expect(bucketOf(2 ** 40)).toBe(33 * 16)
    // Three samples count as exactly 0 ms, and read as 0.
    expect(histogram.summary()).toEqual({
      count: 4,
      p50: 0,
      p99: upperBound(33 * 16),
      max: 2 ** 40,
    })
  })

  it('quantiles are bucket upper bounds clamped to the maximum: p50 ≤ p99 ≤ max', () => {
    const histogram = new LatencyHistogram()
    for (let i = 1; i <= 100; i++) histogram.record(i)
    const { count, p50, p99, max } = histogram.summary()
    expect(count).toBe(100)
    expect(max).toBe(100)
    expect(p50).toBeGreaterThanOrEqual(50)
    expect(p50).toBeLessThan(50 * 1.07)
    expect(p99).toBeGreaterThanOrEqual(99)
    expect(p99).toBeLessThanOrEqual(max)
  })
})
