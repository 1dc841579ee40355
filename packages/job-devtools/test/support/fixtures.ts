import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

// The protocol package ships its golden recordings (`fixtures/v1`); the panel
// is tested on the same files a user's devtools would read.
const protocolRoot = dirname(
  createRequire(import.meta.url).resolve('@vega/job-devtools-protocol/package.json'),
)
export const GOLDEN_DIR = join(protocolRoot, 'fixtures', 'v1')

/** The names of the golden recordings (without `.ndjson`). */
export function fixtureNames(): string[] {
  return readdirSync(GOLDEN_DIR)
    .filter((file) => file.endsWith('.ndjson'))
    .map((file) => file.slice(0, -'.ndjson'.length))
    .sort()
}

export function readGolden(name: string): string {
  return readFileSync(join(GOLDEN_DIR, `${name}.ndjson`), 'utf8')
}
