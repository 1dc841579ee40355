import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { formatSchema, generateProtocolSchema, SCHEMA_PATH } from '../scripts/generate-schema.js'
import { PROTOCOL_EVENT_TYPES, PROTOCOL_VERSION, toWire } from '../src/index.js'
import { validate } from './support/json-schema.js'

const PACKAGE_DIR = join(import.meta.dirname, '..')
const generated = generateProtocolSchema()

if (process.env.UPDATE_SCHEMA === '1') writeFileSync(SCHEMA_PATH, formatSchema(generated))

const committedText = readFileSync(SCHEMA_PATH, 'utf8')
const committed = JSON.parse(committedText) as Record<string, unknown>

describe('protocol.json', () => {
  it('is exactly what the current types generate (run UPDATE_SCHEMA=1 to rewrite it)', () => {
    expect(committedText).toBe(formatSchema(generated))
  })

  it('carries the protocol version and every event type of the union', () => {
    expect(committed.version).toEqual({
      major: PROTOCOL_VERSION.major,
      minor: PROTOCOL_VERSION.minor,
    })
    expect(committed.events).toEqual([...PROTOCOL_EVENT_TYPES])
  })

  it('changes when a wire type changes, so a stale protocol.json cannot pass', () => {
    const file = 'src/task-events.ts'
    const source = readFileSync(join(PACKAGE_DIR, file), 'utf8')
    const withField = source.replace(
      "readonly type: 'task:exited'",
      "readonly type: 'task:exited'\n  readonly exitCode?: number",
    )
    const retyped = source.replace('readonly delay: number', 'readonly delay: string')
    expect(withField).not.toBe(source)
    expect(retyped).not.toBe(source)
    expect(formatSchema(generateProtocolSchema({ [file]: withField }))).not.toBe(committedText)
    expect(formatSchema(generateProtocolSchema({ [file]: retyped }))).not.toBe(committedText)

    const version = readFileSync(join(PACKAGE_DIR, 'src/version.ts'), 'utf8')
    const current = PROTOCOL_VERSION.minor
    const next = current + 1
    const bumped = version
      .replace(`readonly minor: ${current}`, `readonly minor: ${next}`)
      .replace(`minor: ${current},`, `minor: ${next},`)
    expect(bumped).not.toBe(version)
    expect(generateProtocolSchema({ 'src/version.ts': bumped }).version).toEqual({
      major: 1,
      minor: next,
    })
  })

  it('accepts real envelopes and encoded values, and rejects broken ones', () => {
    const error = new Error('outer', { cause: new Map([[1, new Set([-0])]]) })
    const envelope = {
      proto: 'vega-job',
      v: 1,
      sid: 's',
      seq: 1,
      ts: 0,
      src: { runtime: 'r', lib: 'l' },
      e: { type: 'task:retry', taskId: 1, attempt: 1, delay: 5, error: toWire(error) },
    }
    expect(validate(committed, envelope)).toEqual([])
    expect(validate(committed, { ...envelope, v: 2 })).not.toEqual([])
    expect(validate(committed, { ...envelope, e: { type: 'task:retry', taskId: 1 } })).not.toEqual(
      [],
    )
  })
})
