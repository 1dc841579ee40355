import { describe, expect, it } from 'vitest'
import { shareReadings } from '../src/index.js'

describe('shareReadings', () => {
  it('reads once per 16 calls of one synchronous stretch', () => {
    let reads = 0
    const stamp = shareReadings(() => ++reads)
    const stamps = Array.from({ length: 33 }, () => stamp())
    expect(stamps).toEqual([
      ...Array.from({ length: 16 }, () => 1),
      ...Array.from({ length: 16 }, () => 2),
      3,
    ])
    expect(reads).toBe(3)
  })

  it('reads again once the stretch is over, even with uses left', async () => {
    let reads = 0
    const stamp = shareReadings(() => ++reads)
    expect([stamp(), stamp()]).toEqual([1, 1])
    await Promise.resolve()
    expect([stamp(), stamp()]).toEqual([2, 2])
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(stamp()).toBe(3)
  })

  it('gives each function its own reading', () => {
    let a = 0
    let b = 100
    const stampA = shareReadings(() => ++a)
    const stampB = shareReadings(() => ++b)
    expect([stampA(), stampB(), stampA(), stampB()]).toEqual([1, 101, 1, 101])
  })
})
