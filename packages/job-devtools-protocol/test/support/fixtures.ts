import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { type DevtoolsState, timelines } from '../../src/index.js'

export const FIXTURES_DIR = join(import.meta.dirname, '..', '..', 'fixtures', 'v1')
export const UPDATE = process.env.UPDATE_GOLDEN === '1'

export function fixturePath(...parts: string[]): string {
  return join(FIXTURES_DIR, ...parts)
}

export function readFixture(...parts: string[]): string {
  const path = fixturePath(...parts)
  if (!existsSync(path)) {
    throw new Error(`missing fixture ${path}; record it with UPDATE_GOLDEN=1`)
  }
  return readFileSync(path, 'utf8')
}

export function writeFixture(text: string, ...parts: string[]): void {
  const path = fixturePath(...parts)
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text)
}

/** The reduced timelines of one session, as committed next to a recording. */
export function formatTimelines(state: DevtoolsState, sid: string): string {
  return `${JSON.stringify(timelines(state, sid), null, 2)}\n`
}
