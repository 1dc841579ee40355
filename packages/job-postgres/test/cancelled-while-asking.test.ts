// A call cancelled while its first ask has not reached the server yet: the
// `leave` its cancellation sends may run before the ask (another pool
// connection, or the ask still waiting in the process behind an earlier one),
// find nothing, and the ask then takes a place in the line for a call that
// no longer exists. Its waiting reply must give that place up, or the key is
// handed to nobody and held for a whole lease.

import { withCoordinator } from '@vega/job-coordination'
import { run, settle } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import { eventually, poolOf, rows, setup, usePostgres } from './support.js'

const pg = usePostgres()
/** Far longer than the test may take: a place left behind would hold the key this long. */
const LEASE = 120_000
const WAIT = 30_000

describe('a call cancelled before its first ask reached the server', () => {
  it('gives up the place its late ask took: the next calls run at once, and only the fence row is left', async () => {
    // One connection: c's leave waits for it behind b's ask, and c's ask,
    // sent once b's is answered, behind the leave. The leave finds nothing.
    const s = setup(pg.url, { leaseMs: LEASE, connectTimeoutMs: WAIT, poolMax: 1 })
    const admin = poolOf(pg.url, { max: 2 })
    const key = 'ghost'
    let open = () => {}
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    let entered = false
    const holding = withCoordinator(
      async () => {
        entered = true
        await gate
      },
      s.coordination.serialize,
      { key },
    )
    const quick = withCoordinator(() => 'ran', s.coordination.serialize, { key })

    const holder = run(s.runtime, holding)
    await eventually(() => entered, WAIT, 'the holder entered')

    // Hold the key's fence row: every statement on the key now waits on the server.
    const locker = await admin.connect()
    try {
      await locker.query('BEGIN')
      await locker.query(`SELECT 1 FROM "${s.schema}".fences WHERE key = $1 FOR UPDATE`, [
        JSON.stringify(key),
      ])
      // b's first ask goes on the wire and waits for the row; c's waits in
      // this process behind it (a process sends its first asks of one key in
      // order).
      const b = run(s.runtime, quick)
      const c = run(s.runtime, quick)
      await eventually(
        async () =>
          (
            await rows(
              admin,
              "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
            )
          ).length >= 1,
        WAIT,
        "b's ask waiting for the row",
      )
      c.cancel()
      expect((await settle(c)).status).toBe('cancelled')
      await locker.query('COMMIT')

      open()
      await settle(holder)
      expect(await b).toBe('ran')
    } finally {
      locker.release()
    }
    // No place and no lease outlive the calls: with a place left to c, the
    // release of b would have handed the key to it, for a whole lease.
    await eventually(
      async () =>
        (await rows(admin, `SELECT 1 FROM "${s.schema}".holders`)).length === 0 &&
        (await rows(admin, `SELECT 1 FROM "${s.schema}".waiters`)).length === 0,
      WAIT,
      'no holder and no waiter left',
    )
    expect(await run(s.runtime, quick)).toBe('ran')
  })
})
