// Bad options fail at once, naming the option and the value, before touching Postgres.

import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, run, settle } from '@vega/job-core'
import { isStorageUnavailableError, StorageUnavailableError } from '@vega/job-distributed'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import {
  assertLease,
  createPostgresCoordination,
  fencingToken,
  isPostgresUnavailableError,
  PostgresUnavailableError,
} from '../src/index.js'

// A pool that never connects: nothing here reaches a server.
const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' })

describe('createPostgresCoordination(options)', () => {
  const good = { pool, leaseMs: 1000 }
  it.each([
    [null, /options must be an object such as \{ pool, leaseMs: 10_000 \}/],
    [{ leaseMs: 1000 }, /pool is missing; pass a node-postgres Pool/],
    [
      { pool: { query: 1 }, leaseMs: 1000 },
      /pool must be a node-postgres \(pg 8\) Pool, new pg\.Pool\(…\), got an object \(Object\)/,
    ],
    [{ ...good, schema: 'Bad-Name' }, /schema must be a lower-case identifier .* got 'Bad-Name'/],
    [{ ...good, schema: 7 }, /schema must be a lower-case identifier .* got 7/],
    [
      { ...good, codec: { encode: 1 } },
      /codec must be \{ encode\(value\): string, decode\(text\): unknown \}, got an object \(Object\)/,
    ],
    [
      { ...good, leaderContext: { lead: 1, joined: () => {} } },
      /createPostgresCoordination\(options\): leaderContext\.lead must be a function/,
    ],
    [{ ...good, lease: 1000 }, /lease/],
  ])('bad option #%# fails with a TypeError naming it', (options, message) => {
    expect(() => createPostgresCoordination(options as never)).toThrow(TypeError)
    expect(() => createPostgresCoordination(options as never)).toThrow(message)
  })

  it.each([
    [{ pool, leaseMs: 5 }, /leaseMs must be an integer ≥ 10 .* got 5/],
    [{ pool, leaseMs: '1000' }, /leaseMs must be an integer ≥ 10 .* got '1000'/],
    [
      { pool, leaseMs: 1000, connectTimeoutMs: 0 },
      /connectTimeoutMs must be a positive integer \(ms\), got 0/,
    ],
    [
      { pool, leaseMs: 1000, connectTimeoutMs: 1.5 },
      /connectTimeoutMs must be a positive integer \(ms\), got 1\.5/,
    ],
  ])('bad number #%# fails with a RangeError naming it', (options, message) => {
    expect(() => createPostgresCoordination(options as never)).toThrow(RangeError)
    expect(() => createPostgresCoordination(options as never)).toThrow(message)
  })

  it('refuses an ended pool', async () => {
    const ended = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' })
    await ended.end()
    expect(() => createPostgresCoordination({ pool: ended, leaseMs: 1000 })).toThrow(
      /pool was ended \(pool\.end\(\) was called\); pass an open one/,
    )
  })

  it('createSerialize refuses a bad concurrency, naming it', () => {
    const coordination = createPostgresCoordination({ pool, leaseMs: 1000 })
    expect(() => coordination.createSerialize({ concurrency: 0 })).toThrow(
      /concurrency must be an integer ≥ 1, got 0/,
    )
    expect(() => coordination.createSerialize({ concurrency: 2, size: 3 } as never)).toThrow(/size/)
  })

  it('a strategy used in a runtime without the plugin fails the call with a TypeError saying what to install', async () => {
    const coordination = createPostgresCoordination({ pool, leaseMs: 1000 })
    const runtime = createRuntime({ plugins: [installCoordination] })
    const outcome = await settle(
      run(
        runtime,
        withCoordinator(async () => 1, coordination.serialize, { key: 'k' }),
      ),
    )
    expect(outcome.status).toBe('error')
    expect(String((outcome as { error: unknown }).error)).toMatch(
      /createRuntime\(\{ plugins: \[installCoordination, coordination\.plugin\] \}\) using the same createPostgresCoordination\(…\) result/,
    )
  })

  it('fencingToken and assertLease outside a leased body say where to call them', async () => {
    const runtime = createRuntime()
    const task = run(runtime, async (ctx) => {
      const token = await fencingToken(ctx).catch((error: unknown) => error)
      const asserted = await assertLease(ctx).catch((error: unknown) => error)
      return [token, asserted]
    })
    const [token, asserted] = (await task) as [Error, Error]
    expect(token).toBeInstanceOf(TypeError)
    expect(token.message).toMatch(
      /holds no distributed lease .* withCoordinator\(taskFn, coordination\.<strategy>, \{ key \}\)/,
    )
    expect(asserted.message).toMatch(/^assertLease\(ctx\): task #\d+ holds no distributed lease/)
  })
})

describe('PostgresUnavailableError', () => {
  it("is @vega/job-distributed's StorageUnavailableError too; its guard knows one from another copy (its own brand) and no other engine's", () => {
    const down = new PostgresUnavailableError('down', 'acquire', {
      cause: new Error('ECONNREFUSED'),
    })
    expect(down).toBeInstanceOf(StorageUnavailableError)
    expect(isStorageUnavailableError(down)).toBe(true)
    expect(down).toMatchObject({ name: 'PostgresUnavailableError', operation: 'acquire' })
    expect(String(down)).toBe('PostgresUnavailableError: down')
    expect(isPostgresUnavailableError(down)).toBe(true)
    expect(isPostgresUnavailableError(new StorageUnavailableError('down', 'acquire'))).toBe(false)
    const foreign = Object.defineProperty(
      new Error('down'),
      Symbol.for('@vega/job-postgres/PostgresUnavailableError'),
      { value: true },
    )
    expect(foreign instanceof PostgresUnavailableError).toBe(false)
    expect(isPostgresUnavailableError(foreign)).toBe(true)
  })
})
