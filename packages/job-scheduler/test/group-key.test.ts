import os from 'node:os'
import { describe, expect, it } from 'vitest'
import { groupOfHash } from '../src/group-key.js'
import { DEFAULT_PARALLELISM, javaStringHashCode, toGroupKey } from '../src/index.js'

// Computed with java.lang.String#hashCode and Math.floorMod on OpenJDK 17
// (17.0.15), by a throwaway program outside this repository.
const JVM_VECTORS: ReadonlyArray<{
  readonly id: string
  readonly hash: number
  readonly groups: Readonly<Record<number, number>>
}> = [
  { id: '', hash: 0, groups: { 1: 0, 2: 0, 16: 0, 64: 0, 128: 0, 1000: 0, 2147483647: 0 } },
  { id: 'a', hash: 97, groups: { 1: 0, 2: 1, 16: 1, 64: 33, 128: 97, 1000: 97, 2147483647: 97 } },
  {
    id: 'order-1',
    hash: -1207111310,
    groups: { 1: 0, 2: 0, 16: 2, 64: 50, 128: 114, 1000: 690, 2147483647: 940372337 },
  },
  {
    id: 'order-2',
    hash: -1207111309,
    groups: { 1: 0, 2: 1, 16: 3, 64: 51, 128: 115, 1000: 691, 2147483647: 940372338 },
  },
  {
    id: 'Aa',
    hash: 2112,
    groups: { 1: 0, 2: 0, 16: 0, 64: 0, 128: 64, 1000: 112, 2147483647: 2112 },
  },
  {
    id: 'BB',
    hash: 2112,
    groups: { 1: 0, 2: 0, 16: 0, 64: 0, 128: 64, 1000: 112, 2147483647: 2112 },
  },
  {
    id: 'polygenelubricants',
    hash: -2147483648,
    groups: { 1: 0, 2: 0, 16: 0, 64: 0, 128: 0, 1000: 352, 2147483647: 2147483646 },
  },
  {
    id: 'customer:42',
    hash: -1772098662,
    groups: { 1: 0, 2: 0, 16: 10, 64: 26, 128: 26, 1000: 338, 2147483647: 375384985 },
  },
  { id: '0', hash: 48, groups: { 1: 0, 2: 0, 16: 0, 64: 48, 128: 48, 1000: 48, 2147483647: 48 } },
  {
    id: '\u8ba2\u5355-1',
    hash: 1085411543,
    groups: { 1: 0, 2: 1, 16: 7, 64: 23, 128: 87, 1000: 543, 2147483647: 1085411543 },
  },
  {
    id: '\u00dcn\u00efc\u00f6d\u00e9',
    hash: 1055431381,
    groups: { 1: 0, 2: 1, 16: 5, 64: 21, 128: 85, 1000: 381, 2147483647: 1055431381 },
  },
  {
    id: '\ud83d\ude00',
    hash: 1772899,
    groups: { 1: 0, 2: 1, 16: 3, 64: 35, 128: 99, 1000: 899, 2147483647: 1772899 },
  },
  {
    id: 'order-\ud83d\ude00-7',
    hash: -1884536468,
    groups: { 1: 0, 2: 0, 16: 12, 64: 44, 128: 108, 1000: 532, 2147483647: 262947179 },
  },
  {
    id: '\u00e9',
    hash: 233,
    groups: { 1: 0, 2: 1, 16: 9, 64: 41, 128: 105, 1000: 233, 2147483647: 233 },
  },
  {
    id: 'e\u0301',
    hash: 3900,
    groups: { 1: 0, 2: 0, 16: 12, 64: 60, 128: 60, 1000: 900, 2147483647: 3900 },
  },
  {
    id: 'x'.repeat(1000),
    hash: -1715418112,
    groups: { 1: 0, 2: 0, 16: 0, 64: 0, 128: 0, 1000: 888, 2147483647: 432065535 },
  },
  {
    id: '\ud83d\ude80launch\ud83d\ude80',
    hash: 1403423673,
    groups: { 1: 0, 2: 1, 16: 9, 64: 57, 128: 57, 1000: 673, 2147483647: 1403423673 },
  },
  {
    id: 'a\u0000b',
    hash: 93315,
    groups: { 1: 0, 2: 1, 16: 3, 64: 3, 128: 3, 1000: 315, 2147483647: 93315 },
  },
]

describe('javaStringHashCode', () => {
  it.each(JVM_VECTORS)('hashes $id like java.lang.String#hashCode', ({ id, hash }) => {
    expect(javaStringHashCode(id)).toBe(hash)
  })
})

describe('toGroupKey', () => {
  it('puts "order-1" in group 114 of 128, where a naive % gives -14', () => {
    expect(javaStringHashCode('order-1') % 128).toBe(-14)
    expect(toGroupKey('order-1', 128)).toBe(114)
  })

  it.each(JVM_VECTORS)('matches Math.floorMod on a JVM for $id', ({ id, groups }) => {
    for (const [parallelism, group] of Object.entries(groups)) {
      expect(toGroupKey(id, Number(parallelism))).toBe(group)
    }
  })

  it('never returns -0 or a value outside [0, parallelism)', () => {
    // -2147483648 is divisible by 128: the floor-mod must be +0, not -0.
    expect(Object.is(toGroupKey('polygenelubricants', 128), 0)).toBe(true)
    for (let i = 0; i < 2000; i++) {
      const group = toGroupKey(`id-${i}-\u00e9`, 7)
      expect(group).toBeGreaterThanOrEqual(0)
      expect(group).toBeLessThan(7)
    }
  })

  it('groupOfHash is floorMod(hash, parallelism) for every int32 hash, at the edges and at random', () => {
    // The definition, in BigInt so that no float rounding or -0 can hide a slip.
    const floorMod = (h: number, p: number) =>
      Number(((BigInt(h) % BigInt(p)) + BigInt(p)) % BigInt(p))
    const hashes = [0, 1, -1, 2 ** 31 - 1, -(2 ** 31), -(2 ** 31) + 1, 127, -127, -128, 128]
    for (let i = 0; i < 3000; i++) hashes.push((Math.random() * 2 ** 32) | 0)
    for (const p of [1, 2, 3, 7, 16, 128, 1000, 65_537, 2 ** 31 - 1]) {
      for (const h of [...hashes, p, -p, 2 * p, -2 * p, p - 1, -p + 1, -p - 1]) {
        if (h < -(2 ** 31) || h >= 2 ** 31) continue
        const group = groupOfHash(h, p)
        if (!Object.is(group, floorMod(h, p))) expect([h, p, group]).toEqual([h, p, floorMod(h, p)])
      }
    }
  })

  it('depends on the id only, the same for the same parallelism', () => {
    expect(toGroupKey('order-9', 16)).toBe(toGroupKey('order-9', 16))
  })

  it('rejects parallelism <= 0, fractional or NaN with a RangeError', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => toGroupKey('order-1', bad)).toThrow(RangeError)
    }
    expect(() => toGroupKey('order-1', 0)).toThrow(/positive integer, got 0/)
  })

  it('rejects a non-string id with a TypeError', () => {
    expect(() => toGroupKey(42 as unknown as string, 16)).toThrow(TypeError)
  })

  it('defaults to DEFAULT_PARALLELISM = 64 × CPUs', () => {
    expect(DEFAULT_PARALLELISM).toBe(64 * os.availableParallelism())
    expect(toGroupKey('order-1')).toBe(toGroupKey('order-1', DEFAULT_PARALLELISM))
  })
})
