// The faults: a holder killed or paused, Postgres restarted, one process's
// connections terminated, a blackhole between a process and Postgres, a pool
// the app exhausted, a statement stuck on a lock; and what is left in the
// tables afterwards.

import { startBlackhole } from '@vega/blackhole'
import { gatedHolder } from '@vega/distributed-tests'
import { describeHolderFaults } from '@vega/distributed-tests/processes'
import { withCoordinator } from '@vega/job-coordination'
import { run, settle, shutdown, type TaskContext } from '@vega/job-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertLease,
  fencingToken,
  LeaseLostError,
  PostgresUnavailableError,
} from '../src/index.js'
import { eventually, freshSchema, poolOf, rows, type Setup, setup, usePostgres } from './support.js'
import { startWorkers, type Worker } from './workers.js'

const LEASE = 1000
const WAIT = 30 * LEASE

const pg = usePostgres()
const spawned: Worker[] = []
let admin: ReturnType<typeof poolOf>
beforeAll(() => {
  admin = poolOf(pg.url, { max: 2 })
})
afterAll(() => {
  for (const worker of spawned) {
    if (worker.child.exitCode === null && worker.child.signalCode === null) worker.kill('SIGKILL')
  }
})

async function workersOn(count: number, schema = freshSchema()): Promise<Worker[]> {
  const workers = await startWorkers(count, { url: pg.url, schema, leaseMs: LEASE })
  spawned.push(...workers)
  return workers
}

describeHolderFaults({
  title: 'a holder that dies or stops',
  lease: LEASE,
  workersOn: (count) => workersOn(count),
})

describe('Postgres itself', () => {
  it('pg_terminate_backend of every connection of one process (LISTEN included): its body runs on, its lease is renewed on new connections, the waiter elsewhere goes next by NOTIFY', async () => {
    const [a, b] = (await workersOn(2)) as [Worker, Worker]
    const held = a.call({
      strategy: 'serialize',
      key: 't',
      bodyMs: 3 * LEASE,
      value: 'a',
      fence: true,
    })
    await a.waitFor((m) => m.t === 'token' && m.n === held, WAIT, 'the holder’s token')
    const next = b.call({ strategy: 'serialize', key: 't', bodyMs: 10, value: 'b' })
    await b.waitFor((m) => m.t === 'called' && m.n === next, WAIT, 'the waiter')
    const terminated = await rows<{ n: number }>(
      admin,
      'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [`vega-worker-${a.pid}`],
    )
    expect(terminated[0]!.n).toBeGreaterThanOrEqual(2) // a pool connection and the LISTEN connection
    const [sa, sb] = await Promise.all([a.settled(held, WAIT), b.settled(next, WAIT)])
    expect(sa.promise).toEqual({ status: 'resolved', value: 'a' })
    expect(sb.promise).toEqual({ status: 'resolved', value: 'b' })
    // A opened its LISTEN connection again.
    await eventually(
      async () =>
        (
          await rows(
            admin,
            "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'",
            [`vega-worker-${a.pid}`],
          )
        ).length === 1,
      WAIT,
      'the LISTEN connection opened again',
    )
    await Promise.all([a.stop(), b.stop()])
  })

  it('Postgres restarted mid-run (an immediate stop: a crash): the holder loses its lease, calls while it is down fail with PostgresUnavailableError, fences survive and only grow', async () => {
    const s = setup(pg.url, { leaseMs: 3 * LEASE, connectTimeoutMs: 600 })
    const { holder, context, release } = gatedHolder({
      runtime: s.runtime,
      serialize: s.coordination.serialize,
      key: 'r',
      fencingToken,
      assertLease,
    })
    // Observed from the start: it fails while Postgres is down, before the test reads it.
    const holderOutcome = settle(holder)
    await eventually(() => context() !== undefined, WAIT, 'the holder started')
    const before = await fencingToken(context() as TaskContext)
    await pg.server.stop({ mode: 'immediate' })
    const startedAt = performance.now()
    const whileDown = await settle(
      run(
        s.runtime,
        withCoordinator(async () => 'never', s.coordination.exhaust, { key: 'other' }),
      ),
    )
    expect(whileDown.status).toBe('error')
    expect((whileDown as { error: unknown }).error).toBeInstanceOf(PostgresUnavailableError)
    // Within connectTimeoutMs (600), with room for a loaded machine.
    expect(performance.now() - startedAt).toBeLessThan(5000)
    // Down longer than a lease: the holder cannot renew.
    await new Promise((resolve) => setTimeout(resolve, 3 * LEASE))
    await pg.server.start()
    release()
    const outcome = await holderOutcome
    expect(outcome.status).toBe('error')
    expect((outcome as { error: unknown }).error).toBeInstanceOf(LeaseLostError)
    const after = await eventuallyToken(s, 'r')
    expect(after.fence).toBeGreaterThan(before.fence)
    expect(after.runId).toBe(before.runId) // the same database, its rows intact
    await shutdown(s.runtime)
    expect(s.coordination.inspect()).toMatchObject({ waiters: 0, leases: 0, keys: 0 })
  })

  it('a blackhole between one process and Postgres: a call ends within connectTimeoutMs with PostgresUnavailableError, the holder loses its lease, and later calls succeed once traffic flows', async () => {
    const hole = await startBlackhole(pg.server.port)
    try {
      const url = `postgres://postgres@127.0.0.1:${hole.port}/postgres`
      const s = setup(url, { leaseMs: 3 * LEASE, connectTimeoutMs: 600, poolMax: 2 })
      expect(
        await run(
          s.runtime,
          withCoordinator(async () => 'warm', s.coordination.serialize, { key: 'b' }),
        ),
      ).toBe('warm')
      let lost: unknown
      const holder = run(
        s.runtime,
        withCoordinator(
          async (ctx) => {
            await fencingToken(ctx)
            hole.cut()
            await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))
            lost = ctx.signal.reason
          },
          s.coordination.serialize,
          { key: 'b' },
        ),
      )
      const held = await settle(holder)
      expect(held.status).toBe('error')
      expect((held as { error: unknown }).error).toBeInstanceOf(LeaseLostError)
      expect(lost).toBeInstanceOf(LeaseLostError)
      const startedAt = performance.now()
      const cut = await settle(
        run(
          s.runtime,
          withCoordinator(async () => 'x', s.coordination.exhaust, { key: 'c' }),
        ),
      )
      expect(cut.status).toBe('error')
      const error = (cut as { error: unknown }).error
      expect(error).toBeInstanceOf(PostgresUnavailableError)
      expect((error as Error).message).toMatch(/did not answer within connectTimeoutMs \(600 ms\)/)
      expect(performance.now() - startedAt).toBeLessThan(5000)
      hole.restore()
      expect(await eventuallyValue(s, 'c')).toBe('back')
      await shutdown(s.runtime)
      expect(s.coordination.inspect()).toMatchObject({ waiters: 0, leases: 0, keys: 0 })
    } finally {
      await hole.close()
    }
  })

  it('a pool the app exhausted: a call ends within connectTimeoutMs with PostgresUnavailableError, and runs once the app gives a connection back', async () => {
    const s = setup(pg.url, { leaseMs: 3 * LEASE, connectTimeoutMs: 500, poolMax: 2 })
    expect(
      await run(
        s.runtime,
        withCoordinator(async () => 'warm', s.coordination.serialize, { key: 'p' }),
      ),
    ).toBe('warm')
    const taken = [await s.pool.connect(), await s.pool.connect()]
    let ran = false
    const startedAt = performance.now()
    const outcome = await settle(
      run(
        s.runtime,
        withCoordinator(
          async () => {
            ran = true
          },
          s.coordination.serialize,
          { key: 'p' },
        ),
      ),
    )
    expect(outcome.status).toBe('error')
    expect((outcome as { error: unknown }).error).toBeInstanceOf(PostgresUnavailableError)
    expect(performance.now() - startedAt).toBeLessThan(5000)
    expect(ran).toBe(false)
    for (const client of taken) client.release()
    expect(await eventuallyValue(s, 'p')).toBe('back')
    await shutdown(s.runtime)
    // The acquire that waited for a connection ran late and was given back: nothing holds the key.
    await eventually(
      async () => (await rows(admin, `SELECT 1 FROM "${s.schema}".holders`)).length === 0,
      WAIT,
      'the late grant given back',
    )
  })

  it('lock_timeout: a statement of the package stuck on a row lock is cancelled by Postgres itself after connectTimeoutMs', async () => {
    const s = setup(pg.url, { leaseMs: 3 * LEASE, connectTimeoutMs: 400 })
    expect(
      await run(
        s.runtime,
        withCoordinator(async () => 'warm', s.coordination.serialize, { key: 'l' }),
      ),
    ).toBe('warm')
    const locker = await admin.connect()
    try {
      await locker.query('BEGIN')
      await locker.query(`SELECT * FROM "${s.schema}".fences WHERE key = $1 FOR UPDATE`, [
        (await rows<{ key: string }>(admin, `SELECT key FROM "${s.schema}".fences`))[0]!.key,
      ])
      const outcome = await settle(
        run(
          s.runtime,
          withCoordinator(async () => 'x', s.coordination.serialize, { key: 'l' }),
        ),
      )
      expect((outcome as { error: unknown }).error).toBeInstanceOf(PostgresUnavailableError)
      // Still holding the lock: without the package's lock_timeout its acquire would wait on it.
      await eventually(
        async () =>
          (
            await rows(
              admin,
              "SELECT 1 FROM pg_stat_activity WHERE query LIKE '%.acquire(%' AND state = 'active' AND pid <> pg_backend_pid()",
            )
          ).length === 0,
        WAIT,
        'the stuck acquire cancelled by the server',
      )
      await locker.query('ROLLBACK')
    } finally {
      locker.release()
    }
    await shutdown(s.runtime)
  })
})

describe('what is left', () => {
  it('after every call settled, only fence rows remain: expired leases, places and dedupe results of a dead process are swept', async () => {
    const schema = freshSchema()
    const [a, b] = (await workersOn(2, schema)) as [Worker, Worker]
    // A dedupe result (b followed a's leader), then a holder and a waiter killed with their process.
    const leader = a.call({ strategy: 'dedupe', key: 'd', bodyMs: 300, value: 'v' })
    await a.entered(leader, WAIT)
    const follower = b.call({ strategy: 'dedupe', key: 'd', bodyMs: 300, value: 'w' })
    expect((await b.settled(follower, WAIT)).promise).toEqual({ status: 'resolved', value: 'v' })
    const held = a.call({
      strategy: 'serialize',
      key: 'z',
      bodyMs: 60 * LEASE,
      value: 'a',
      fence: true,
    })
    await a.waitFor((m) => m.t === 'token' && m.n === held, WAIT, 'held')
    a.kill('SIGKILL')
    await b.stop()
    const count = async (table: string) =>
      (await rows<{ n: number }>(admin, `SELECT count(*)::int AS n FROM "${schema}".${table}`))[0]!
        .n
    expect(await count('holders')).toBe(1)
    // Nobody touches these keys again: the periodic sweep of a live process clears them.
    const sweeper = setup(pg.url, { schema, leaseMs: LEASE })
    expect(
      await run(
        sweeper.runtime,
        withCoordinator(async () => 1, sweeper.coordination.exhaust, { key: 'elsewhere' }),
      ),
    ).toBe(1)
    await eventually(
      async () =>
        (await count('holders')) + (await count('waiters')) + (await count('results')) === 0,
      WAIT,
      'every expired row swept',
    )
    expect(await count('fences')).toBe(3)
    await shutdown(sweeper.runtime)
  })
})

/** The first grant after a restart may race the pool's reconnection: try a few times. */
async function eventuallyToken(s: Setup, key: string): Promise<{ fence: number; runId: string }> {
  for (let attempt = 0; ; attempt++) {
    const outcome = await settle(
      run(
        s.runtime,
        withCoordinator(async (ctx) => fencingToken(ctx), s.coordination.serialize, { key }),
      ),
    )
    if (outcome.status === 'success') return outcome.value as { fence: number; runId: string }
    if (attempt > 30) throw (outcome as { error: unknown }).error
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

async function eventuallyValue(s: Setup, key: string): Promise<unknown> {
  for (let attempt = 0; ; attempt++) {
    const outcome = await settle(
      run(
        s.runtime,
        withCoordinator(async () => 'back', s.coordination.serialize, { key }),
      ),
    )
    if (outcome.status === 'success') return outcome.value
    if (attempt > 30) throw (outcome as { error: unknown }).error
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}
