/**
 * The order in which a priority queue hands out a batch of entries listed in
 * arrival order: highest priority first, and among equal priorities the
 * earliest arrival. O(n), no comparison callback.
 *
 * A stable least-significant-digit radix sort over the bytes of the
 * priority's bit pattern, so ties keep their arrival order. Bytes every entry
 * shares (the high bytes of timestamps, the low bytes of small integers) are
 * skipped: 100k distinct integer priorities take 4 passes of 256 buckets.
 */

// One IEEE-754 double seen as its two 32-bit halves, in the platform's byte order.
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1
const LOW = LITTLE_ENDIAN ? 0 : 1
const HIGH = LITTLE_ENDIAN ? 1 : 0

/**
 * The indices of `priorities`, a batch listed in arrival order, in queue
 * order. Any number but NaN is a priority (±Infinity and -0 included; -0 ties
 * with 0, as `===` says).
 *
 * @example
 * ```ts
 * queueOrder([1, 5, 1]) // Uint32Array [1, 0, 2]
 * ```
 */
export function queueOrder(priorities: readonly number[]): Uint32Array {
  const n = priorities.length
  const bits = new Float64Array(n)
  const halves = new Uint32Array(bits.buffer)
  // `+ 0` turns -0 into 0.
  for (let i = 0; i < n; i++) bits[i] = (priorities[i] as number) + 0
  const order = new Uint32Array(n)
  const low = new Uint32Array(n)
  const high = new Uint32Array(n)
  for (let i = 0; i < n; i++) {
    order[i] = i
    const l = halves[2 * i + LOW] as number
    const h = halves[2 * i + HIGH] as number
    // Ascending unsigned order must be descending priority. Negative numbers
    // keep their bits (sign set: after every non-negative one; a larger
    // magnitude already sorts later); non-negative ones flip every bit but
    // the sign, so a larger one sorts first.
    if (h >>> 31 === 0) {
      low[i] = ~l
      high[i] = h ^ 0x7fffffff
    } else {
      low[i] = l
      high[i] = h
    }
  }
  return radixSort(order, low, high)
}

/**
 * Reorders `order` by the unsigned 64-bit keys (`high`, `low`), parallel
 * to it, ascending and stable. Consumes all three arrays; returns the result.
 */
function radixSort(
  order: Uint32Array<ArrayBuffer>,
  low: Uint32Array<ArrayBuffer>,
  high: Uint32Array<ArrayBuffer>,
): Uint32Array<ArrayBuffer> {
  const n = order.length
  if (n < 2) return order
  // Which bits differ anywhere in the batch: a byte that never differs needs no pass.
  let lowVaries = 0
  let highVaries = 0
  const low0 = low[0] as number
  const high0 = high[0] as number
  for (let k = 1; k < n; k++) {
    lowVaries |= (low[k] as number) ^ low0
    highVaries |= (high[k] as number) ^ high0
  }
  // Each pass reads one set of arrays and writes the other; the key words
  // travel with their index so reads stay sequential.
  let from = order
  let to = new Uint32Array(n)
  let fromLow = low
  let toLow = new Uint32Array(n)
  let fromHigh = high
  let toHigh = new Uint32Array(n)
  const counts = new Uint32Array(256)
  for (let word = 0; word < 2; word++) {
    const varies = word === 0 ? lowVaries : highVaries
    for (let shift = 0; shift < 32; shift += 8) {
      if (((varies >>> shift) & 0xff) === 0) continue
      const key = word === 0 ? fromLow : fromHigh
      counts.fill(0)
      for (let k = 0; k < n; k++) {
        const digit = ((key[k] as number) >>> shift) & 0xff
        counts[digit] = (counts[digit] as number) + 1
      }
      let start = 0
      for (let digit = 0; digit < 256; digit++) {
        const count = counts[digit] as number
        counts[digit] = start
        start += count
      }
      for (let k = 0; k < n; k++) {
        const digit = ((key[k] as number) >>> shift) & 0xff
        const at = counts[digit] as number
        counts[digit] = at + 1
        to[at] = from[k] as number
        toLow[at] = fromLow[k] as number
        toHigh[at] = fromHigh[k] as number
      }
      const order = to
      to = from
      from = order
      const low = toLow
      toLow = fromLow
      fromLow = low
      const high = toHigh
      toHigh = fromHigh
      fromHigh = high
    }
  }
  return from
}
