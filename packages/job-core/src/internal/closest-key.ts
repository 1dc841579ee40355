/**
 * Edit distance between two strings: insertions, deletions, substitutions
 * and swaps of two neighbouring characters each cost 1 (optimal string
 * alignment). Swaps count once because `lable` for `label` is the typo
 * people make, and plain Levenshtein would rate it as far as two edits.
 */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0
  if (a.length === 0) return b.length
  if (b.length === 0) return a.length
  // Three rolling rows: the swap rule looks two rows back.
  let previous2 = new Array<number>(b.length + 1).fill(0)
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  let current = new Array<number>(b.length + 1).fill(0)
  for (let i = 1; i <= a.length; i++) {
    current[0] = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      )
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (previous2[j - 2] as number) + 1)
      }
      current[j] = best
    }
    const recycled = previous2
    previous2 = previous
    previous = current
    current = recycled
  }
  return previous[b.length] as number
}

/**
 * The candidate closest to `input`, or `undefined` when none is close enough
 * to be a plausible typo. Case is ignored (`Label` → `label`); the allowed
 * distance grows with the word (1 edit up to 5 characters, then one more per
 * 3), so short unrelated names are not suggested for each other. Ties go to
 * the earlier candidate. A word that is another inflected (`retries` for
 * `retry`) is one too: a shared start of at least 4 characters that covers
 * all of the shorter word but its last character.
 */
export function closestKey(input: string, candidates: readonly string[]): string | undefined {
  const wanted = input.toLowerCase()
  const allowed = Math.max(1, Math.floor(wanted.length / 3))
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  let inflected: string | undefined
  for (const candidate of candidates) {
    const lower = candidate.toLowerCase()
    const distance = editDistance(wanted, lower)
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
    if (inflected === undefined && isInflection(wanted, lower)) inflected = candidate
  }
  return bestDistance <= allowed ? best : inflected
}

function isInflection(a: string, b: string): boolean {
  const shorter = Math.min(a.length, b.length)
  let shared = 0
  while (shared < shorter && a[shared] === b[shared]) shared++
  return shared >= 4 && shared >= shorter - 1
}
