// This package uses @vega/job-core for types only (an optional peer), so it
// cannot call core's assertKnownKeys at run time; this is the same check,
// with the same wording, kept small.

/** Throws a `TypeError` for the first own key of `options` not in `known`, suggesting the closest. */
export function assertKnownKeys(where: string, options: object, known: readonly string[]): void {
  for (const key in options) {
    if (!Object.hasOwn(options, key) || known.includes(key)) continue
    const list = known.map(quote).join(', ')
    const suggestion = closest(key, known)
    throw new TypeError(
      suggestion === undefined
        ? `${where}: unknown option ${quote(key)}. Known options: ${list}. Remove it or check its spelling.`
        : `${where}: unknown option ${quote(key)}; did you mean ${quote(suggestion)}? Known options: ${list}.`,
    )
  }
}

/** A bad value as a message echoes it: strings quoted, numbers as written, objects by kind. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return quote(value)
  if (value === null || typeof value !== 'object') {
    return typeof value === 'function' ? 'a function' : String(value)
  }
  return Array.isArray(value) ? 'an array' : 'an object'
}

function quote(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
}

/** The closest candidate within 1 edit per 3 characters (at least 1), ignoring case. */
function closest(input: string, candidates: readonly string[]): string | undefined {
  const wanted = input.toLowerCase()
  let best: string | undefined
  let bestDistance = Math.max(1, Math.floor(wanted.length / 3)) + 1
  for (const candidate of candidates) {
    const distance = distanceBetween(wanted, candidate.toLowerCase())
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return best
}

/** Edit distance where swapping two neighbours costs 1 (`flsuhMs` is one typo away). */
function distanceBetween(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)]
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const above = rows[i - 1] as number[]
      let best = Math.min(
        (above[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (above[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      )
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, ((rows[i - 2] as number[])[j - 2] as number) + 1)
      }
      row.push(best)
    }
    rows.push(row)
  }
  return (rows[a.length] as number[])[b.length] as number
}
