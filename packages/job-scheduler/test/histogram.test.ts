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
