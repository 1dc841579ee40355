import { availableCpus } from './internal/cpus.js'
import { describe, requirePositiveInteger } from './internal/validate.js'

/**
 * Wow's default number of ordering groups: 64 × the number of CPUs
 * (`MessageParallelism.DEFAULT_PARALLELISM`), read once at load time.
 *
 * @example
 * ```ts
 * const group = toGroupKey('order-1', DEFAULT_PARALLELISM)
 * ```
 */
export const DEFAULT_PARALLELISM: number = 64 * availableCpus()

/**
 * Java's `String.hashCode()`: `h = 31·h + c` over UTF-16 code units with
 * 32-bit signed overflow. JavaScript strings are UTF-16 too, so non-ASCII
 * and astral characters hash exactly as on a JVM.
 *
 * @example
 * ```ts
 * javaStringHashCode('order-1') // -1207111310
 * ```
 */
export function javaStringHashCode(value: string): number {
  let hash = 0
  for (let i = 0; i < value.length; i++) hash = (Math.imul(31, hash) + value.charCodeAt(i)) | 0
  return hash
}

/**
 * The ordering group of an aggregate id: `javaStringHashCode(id)` floor-mod
 * `parallelism`, always in `[0, parallelism)` and equal to the group a JVM
 * Wow service computes (`Math.floorMod`). Only the id counts, not the tenant
 * or the aggregate name. A naive `%` would give negative groups for half the
 * ids.
 *
 * @example
 * ```ts
 * toGroupKey('order-1', 128) // 114 (a plain `%` gives -14)
 * ```
 */
export function toGroupKey(aggregateId: string, parallelism: number = DEFAULT_PARALLELISM): number {
  if (typeof aggregateId !== 'string') {
    throw new TypeError(
      `toGroupKey(aggregateId, parallelism): aggregateId must be a string, got ${describe(aggregateId)}.`,
    )
  }
  requirePositiveInteger(parallelism, 'toGroupKey(aggregateId, parallelism)', 'parallelism')
  return groupOf(aggregateId, parallelism)
}

/**
 * {@link toGroupKey} for callers that validated `parallelism` once (the
 * dispatcher and the runtime backend, once per message): small enough to be
 * inlined into their admission.
 */
export function groupOf(aggregateId: string, parallelism: number): number {
  return groupOfHash(javaStringHashCode(aggregateId), parallelism)
}

/** {@link groupOf} from an id's Java hash computed earlier. */
export function groupOfHash(hash: number, parallelism: number): number {
  // Java's floorMod, with only non-negative operands: for h = -k - 1 < 0,
  // floorMod(h, p) = p - 1 - (k % p). A remainder of a negative hash can be
  // -0, which is not a small integer: once V8 has seen one, it computes
  // every later % here in floating point (an x87 loop as slow as the rest of
  // an admission). -(hash + 1) is at most 2^31 - 1, still an int32.
  return hash >= 0 ? hash % parallelism : parallelism - 1 - (-(hash + 1) % parallelism)
}
