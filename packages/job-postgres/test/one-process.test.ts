// Calls one after another in one process, on a pool: a pool spreads a
// process's statements over several connections, so a call's release and its
// caller's next call could reach Postgres in either order. A call's answer
// settles once its release was answered: the next call finds the key free.

import { setTimeout as sleep } from 'node:timers/promises'
import { withCoordinator } from '@vega/job-coordination'
import { run, settle, shutdown, type TaskContext } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import { assertLease } from '../src/index.js'
import { rows, setup, usePostgres } from './support.js'

const pg = usePostgres()
const CALLS = 30

describe('calls one after another in one process, on a pool of 4', () => {
  for (const strategy of ['dedupe', 'exhaust', 'serialize', 'keepLatest', 'restart'] as const) {
    it(`${strategy}: each call runs its own body and gets its own value; nothing is left held`, async () => {
      const s = setup(pg.url, { leaseMs: 10_000 })
      const fn = withCoordinator((ctx) => ctx.taskId, s.coordination[strategy], { key: 'k' })
      const values: number[] = []
      for (let i = 0; i < CALLS; i++) values.push(await run(s.runtime, fn))
      // Task ids 1…CALLS: a dedupe call joining the call before it would repeat its value; an exhaust call would be dropped.
      expect(values).toEqual(Array.from({ length: CALLS }, (_, i) => i + 1))
      await shutdown(s.runtime)
      expect(await rows(s.pool, `SELECT holder FROM "${s.schema}".holders`)).toEqual([])
      expect(s.coordination.inspect()).toMatchObject({ waiters: 0, leases: 0, keys: 0 })
    })
  }
})

describe('bursts of restart calls in one process, on a pool of 4', () => {
  it("the newest call of each burst wins: an older call's take, on another connection, never evicts it", async () => {
    const s = setup(pg.url, { leaseMs: 10_000 })
    const fn = withCoordinator(
      (ctx) =>
        new Promise<number>((resolve, reject) => {
          const timer = setTimeout(() => resolve(ctx.taskId), 20)
          ctx.signal.addEventListener('abort', () => {
            clearTimeout(timer)
            reject(ctx.signal.reason)
          })
        }),
      s.coordination.restart,
      { key: 'k' },
    )
    const lastStates: string[] = []
    for (let burst = 0; burst < 15; burst++) {
      const tasks = Array.from({ length: 4 }, () => run(s.runtime, fn))
      await Promise.allSettled(tasks)
      lastStates.push((tasks[3] as (typeof tasks)[number]).state)
    }
    expect(lastStates).toEqual(Array.from({ length: 15 }, () => 'success'))
    await shutdown(s.runtime)
    expect(await rows(s.pool, `SELECT holder FROM "${s.schema}".holders`)).toEqual([])
  })
})

describe('lease renewal in one process', () => {
  it('leases granted at different times each keep renewing past leaseMs, also after one granted before them ended', async () => {
    const LEASE = 2000
    const s = setup(pg.url, { leaseMs: LEASE })
    /** Runs `ms`, then asks Postgres whether the lease still holds (a lease never renewed has expired there). */
    const body = (ms: number) => async (ctx: TaskContext) => {
      await sleep(ms)
      const token = await assertLease(ctx)
      return token.fence
    }
    const call = (key: string, ms: number) =>
      settle(run(s.runtime, withCoordinator(body(ms), s.coordination.serialize, { key })))
    // `short` ends before the first renewal falls due; the others' renewals go on without it.
    const short = call('short', 100)
    const first = call('first', 2.5 * LEASE)
    await sleep(LEASE / 2)
    const second = call('second', 2 * LEASE)
    const settled = await Promise.all([short, first, second])
    // A lost lease fails its call with LeaseLostError: the message says which and why.
    expect(
      settled.map((outcome) =>
        outcome.status === 'error' ? String(outcome.error) : outcome.status,
      ),
    ).toEqual(['success', 'success', 'success'])
    await shutdown(s.runtime)
    expect(await rows(s.pool, `SELECT holder FROM "${s.schema}".holders`)).toEqual([])
  })
})
