// Wake-ups: one LISTEN connection per process, whatever the number of keys;
// a NOTIFY only wakes (the tables are the truth), every waiter re-checks at
// least every leaseMs / 3, and a LISTEN connection that is terminated is
// opened and listened again.

import { withCoordinator } from '@vega/job-coordination'
import { run, settle, shutdown } from '@vega/job-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { channelOf } from '../src/schema.js'
import { eventually, freshSchema, poolOf, rows, setup, usePostgres } from './support.js'
import { startWorkers, type Worker } from './workers.js'

const pg = usePostgres()
const WAIT = 60_000
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

/** The backends of one worker process (its pool and its LISTEN connection share its application_name). */
function backendsOf(worker: Worker): Promise<{ pid: number; query: string }[]> {
  return rows(
    admin,
    'SELECT pid, query FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid',
    [`vega-worker-${worker.pid}`],
  )
}

/** Serialize calls from every worker on one key; resolves with their settlements. */
async function contend(workers: Worker[], perWorker: number, key: string) {
  const calls = workers.flatMap((w) =>
    Array.from({ length: perWorker }, () => ({
      w,
      n: w.call({ strategy: 'serialize', key, bodyMs: 1, value: 'ok' }),
    })),
  )
  return Promise.all(calls.map(({ w, n }) => w.settled(n, WAIT)))
}

/** Sum of the workers' floor re-checks. */
async function floorRechecks(workers: Worker[]): Promise<number> {
  let total = 0
  for (const w of workers) total += (await w.counters()).floorRechecks
  return total
}

describe('wake-ups across processes', () => {
  it('4 processes × 25 serialize calls on one key with a 10 s lease hand over by NOTIFY: not one waiter falls back to its floor', async () => {
    const workers = await startWorkers(4, { url: pg.url, schema: freshSchema(), leaseMs: 10_000 })
    spawned.push(...workers)
    const settled = await contend(workers, 25, 'hot')
    expect(settled.every((m) => m.state === 'success')).toBe(true)
    // Without wake-ups every hand-off would wait for a re-check 3.3 s later.
    expect(await floorRechecks(workers)).toBe(0)
    await Promise.all(workers.map((w) => w.stop()))
  })

  it('one LISTEN connection per process whatever the number of keys; terminated (pg_terminate_backend), it is opened and listened again and hand-offs go back to NOTIFY', async () => {
    const workers = await startWorkers(2, { url: pg.url, schema: freshSchema(), leaseMs: 10_000 })
    spawned.push(...workers)
    // Waiters on 20 keys at once.
    await Promise.all(Array.from({ length: 20 }, (_, i) => contend(workers, 2, `k${i}`)))
    for (const w of workers) {
      const listening = (await backendsOf(w)).filter((b) => b.query.startsWith('LISTEN'))
      expect(listening).toHaveLength(1)
    }
    const [a] = workers as [Worker, Worker]
    const [before] = (await backendsOf(a)).filter((b) => b.query.startsWith('LISTEN'))
    await admin.query('SELECT pg_terminate_backend($1)', [before!.pid])
    await eventually(
      async () => {
        const now = (await backendsOf(a)).filter((b) => b.query.startsWith('LISTEN'))
        return now.length === 1 && now[0]!.pid !== before!.pid
      },
      WAIT,
      'the LISTEN connection opened again',
    )
    const rechecksBefore = await floorRechecks(workers)
    const settled = await contend(workers, 20, 'after')
    expect(settled.every((m) => m.state === 'success')).toBe(true)
    expect(await floorRechecks(workers)).toBe(rechecksBefore)
    await Promise.all(workers.map((w) => w.stop()))
  })
})

describe('the floor', () => {
  it('a waiter whose wake-ups never arrive (its LISTEN connection refused) is granted on its re-check within a lease', async () => {
    // The deaf process's pool holds its connections already; then its Client
    // class is one that cannot connect, so the coordination's LISTEN
    // connection (made from the pool's class) never opens.
    const holder = setup(pg.url, { leaseMs: 600 })
    const pool = poolOf(pg.url, { max: 4, idleTimeoutMillis: 0 })
    const warm = await Promise.all([pool.connect(), pool.connect(), pool.connect(), pool.connect()])
    for (const client of warm) client.release()
    const Client = (pool as unknown as { Client: new (options: object) => object }).Client
    class NoListen extends Client {
      connect(): Promise<void> {
        return Promise.reject(new Error('no listening here'))
      }
    }
    ;(pool as unknown as { Client: unknown }).Client = NoListen
    const deaf = setup(pg.url, { leaseMs: 600, schema: holder.schema, pool })
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const held = run(
      holder.runtime,
      withCoordinator(() => gate, holder.coordination.serialize, { key: 'f' }),
    )
    await eventually(() => holder.coordination.inspect().leases === 1, WAIT, 'held')
    const waiting = run(
      deaf.runtime,
      withCoordinator(async () => 'got it', deaf.coordination.serialize, { key: 'f' }),
    )
    await eventually(
      () => deaf.events.some((e) => e.type === 'coordination:queued'),
      WAIT,
      'queued',
    )
    release()
    await held
    expect(await waiting).toBe('got it')
    expect(deaf.coordination.counters().floorWakeUps).toBeGreaterThan(0)
    await Promise.all([shutdown(holder.runtime), shutdown(deaf.runtime)])
    const outcome = await settle(waiting)
    expect(outcome.status).toBe('success')
  })
})

/** A body that runs until `open()`. */
function gated(): { body: () => Promise<string>; open: () => void } {
  let open!: () => void
  const gate = new Promise<void>((resolve) => {
    open = resolve
  })
  return { body: () => gate.then(() => 'held'), open }
}

describe('a wake-up heard before a call waits', () => {
  // A process remembers a wake-up for a key nobody here waited on; the call
  // that starts waiting on that key later re-checks at once (its
  // engine.want answers with a re-check in the same turn). That re-check is
  // a repeat ask: sent as a first ask, a keepLatest call superseded itself.
  // (A serialize line re-checks by one read of the holder instead.)
  it('keepLatest: the call keeps its place and runs once the holder (another process) releases', async () => {
    const schema = freshSchema()
    const here = setup(pg.url, { schema, leaseMs: 10_000 })
    const there = setup(pg.url, { schema, leaseMs: 10_000 })
    const onK = gated()
    const onJ = gated()
    const heldK = run(
      there.runtime,
      withCoordinator(onK.body, there.coordination.keepLatest, { key: 'k' }),
    )
    const heldJ = run(
      there.runtime,
      withCoordinator(onJ.body, there.coordination.keepLatest, { key: 'j' }),
    )
    await eventually(() => there.coordination.inspect().leases === 2, WAIT, 'k and j held')
    // A keepLatest waiter here on j: its supersession, heard here, tells
    // that everything sent on the channel before it was heard here too.
    const waiterJ = settle(
      run(
        here.runtime,
        withCoordinator(async () => 'j here', here.coordination.keepLatest, { key: 'j' }),
      ),
    )
    await eventually(
      async () =>
        (await rows(admin, `SELECT 1 FROM "${schema}".waiters WHERE key = '"j"'`)).length === 1,
      WAIT,
      'a place on j',
    )
    // A wake-up for k while nobody here waits on it (a NOTIFY only wakes: any is allowed).
    await admin.query(`SELECT pg_notify($1, md5('"k"') || E'\\nw')`, [channelOf(schema)])
    const newerJ = run(
      there.runtime,
      withCoordinator(async () => 'j there', there.coordination.keepLatest, { key: 'j' }),
    )
    expect(await waiterJ).toMatchObject({ status: 'cancelled', reason: 'superseded' })
    let ranK = 0
    const waiterK = run(
      here.runtime,
      withCoordinator(
        async () => {
          ranK++
          return 'k here'
        },
        here.coordination.keepLatest,
        { key: 'k' },
      ),
    )
    await eventually(
      () => here.events.some((e) => e.type === 'coordination:queued' && e.hash === '"k"'),
      WAIT,
      'k queued here',
    )
    onK.open()
    expect(await heldK).toBe('held')
    expect(await waiterK).toBe('k here')
    expect(ranK).toBe(1)
    onJ.open()
    await Promise.all([heldJ, newerJ])
    await Promise.all([shutdown(here.runtime), shutdown(there.runtime)])
    expect(await rows(admin, `SELECT waiter FROM "${schema}".waiters`)).toEqual([])
  })
})
