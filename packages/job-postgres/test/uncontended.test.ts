// The uncontended path: a call's first ask on a key nobody holds or waits
// for is granted, and its release done, by plain statements on the key's
// fence row, without entering the schema's functions (which sweep, count
// the holders and the line, and hand the key on). Both paths give the same
// answers, so only the server can tell which one ran: `track_functions`
// counts each PL/pgSQL function's calls.

import { withCoordinator } from '@vega/job-coordination'
import { run, shutdown } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import { eventually, freshSchema, poolOf, rows, setup, usePostgres } from './support.js'

const pg = usePostgres()
const WAIT = 30_000
const CALLS = 5
const STRATEGIES = ['dedupe', 'exhaust', 'serialize', 'keepLatest', 'restart'] as const

/**
 * Runs `calls` on a coordination whose connections count their function
 * calls, shuts it down, and resolves with the counts once its backends are
 * gone (a backend flushes its counts as it exits).
 */
async function countedCalls(
  schema: string,
  label: string,
  calls: (s: ReturnType<typeof setup>) => Promise<void>,
): Promise<Record<string, number>> {
  const application = `uncontended-${label}-${process.pid}`
  // track_functions is a superuser setting, set per connection (the LISTEN one too).
  const pool = poolOf(pg.url, {
    application_name: application,
    options: '-c track_functions=pl',
  })
  const s = setup(pg.url, { pool, schema, leaseMs: 10_000 })
  await calls(s)
  await shutdown(s.runtime)
  await pool.end()
  const admin = poolOf(pg.url, { max: 1 })
  await eventually(
    async () =>
      (
        await rows(admin, 'SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [
          application,
        ])
      ).length === 0,
    WAIT,
    `the ${label} backends gone`,
  )
  return callsSoFar(admin, schema)
}

/** Calls of each function of the schema counted so far; the periodic sweep's left out (it runs on a timer). */
async function callsSoFar(
  admin: ReturnType<typeof poolOf>,
  schema: string,
): Promise<Record<string, number>> {
  const found = await rows<{ funcname: string; calls: string }>(
    admin,
    "SELECT funcname, calls FROM pg_stat_user_functions WHERE schemaname = $1 AND funcname <> 'sweep'",
    [schema],
  )
  return Object.fromEntries(found.map((row) => [row.funcname, Number(row.calls)]))
}

describe('the uncontended path', () => {
  it('calls one after another never enter the functions, for every strategy, and leave busy at 0; a call that finds the key held does, and the release after a hand-off does not', async () => {
    const schema = freshSchema()
    const admin = poolOf(pg.url, { max: 1 })
    // The first call on a key makes its fence row through the function.
    const before = await countedCalls(schema, 'first', async (s) => {
      for (const strategy of STRATEGIES) {
        const fn = withCoordinator((ctx) => ctx.taskId, s.coordination[strategy], { key: strategy })
        await run(s.runtime, fn)
      }
    })
    const uncontended = await countedCalls(schema, 'uncontended', async (s) => {
      for (const strategy of STRATEGIES) {
        const fn = withCoordinator((ctx) => ctx.taskId, s.coordination[strategy], { key: strategy })
        for (let i = 0; i < CALLS; i++) expect(await run(s.runtime, fn)).toBeGreaterThan(0)
      }
    })
    expect(before.acquire).toBe(STRATEGIES.length)
    expect(uncontended).toEqual(before)
    const busy = await rows<{ key: string; busy: number }>(
      admin,
      `SELECT key, busy FROM "${schema}".fences`,
    )
    expect(Object.fromEntries(busy.map((row) => [row.key, row.busy]))).toEqual(
      Object.fromEntries(STRATEGIES.map((strategy) => [`"${strategy}"`, 0])),
    )

    // Two calls at once: the second asks while the first holds the key.
    const contended = await countedCalls(schema, 'contended', async (s) => {
      const fn = withCoordinator(
        () => new Promise((resolve) => setTimeout(resolve, 20)),
        s.coordination.serialize,
        { key: 'serialize' },
      )
      await Promise.all([run(s.runtime, fn), run(s.runtime, fn)])
    })
    expect(contended.acquire).toBeGreaterThan(uncontended.acquire ?? 0)
    // Only the first release enters the function (it hands the key on); the
    // second call's grant kept the count of its place, so its release finds
    // itself alone and takes the plain path.
    expect((contended.release ?? 0) - (uncontended.release ?? 0)).toBe(1)
    // The line emptied: the key is found free again.
    expect(
      await rows(admin, `SELECT busy FROM "${schema}".fences WHERE key = '"serialize"'`),
    ).toEqual([{ busy: 0 }])
  })
})

describe("a process's first asks of one key", () => {
  it('made while one is on the wire go together, at most 64 to a statement, and the calls run in the order they were made', async () => {
    const schema = freshSchema()
    const admin = poolOf(pg.url, { max: 1 })
    const LINE = 70
    const ran: number[] = []
    const counts = await countedCalls(schema, 'line', async (s) => {
      const calls = Array.from({ length: LINE }, (_, i) =>
        withCoordinator(
          async () => {
            ran.push(i)
            await new Promise((resolve) => setTimeout(resolve, 2))
          },
          s.coordination.serialize,
          { key: 'line' },
        ),
      )
      await Promise.all(calls.map((fn) => run(s.runtime, fn)))
    })
    expect(ran).toEqual(Array.from({ length: LINE }, (_, i) => i))
    // The first call asks alone (its fence row is made by the function);
    // the others were made while it was on the wire: a statement takes the
    // places of the next 64, one acquire each, in their order, and once it
    // is answered another takes the last 5. Asked one at a time,
    // acquire_line would not run at all.
    expect(counts.acquire_line).toBe(2)
    expect(counts.acquire).toBe(LINE)
    expect(await rows(admin, `SELECT busy FROM "${schema}".fences WHERE key = '"line"'`)).toEqual([
      { busy: 0 },
    ])
    expect(await rows(admin, `SELECT key FROM "${schema}".holders`)).toEqual([])
    expect(await rows(admin, `SELECT key FROM "${schema}".waiters`)).toEqual([])
  })
})
