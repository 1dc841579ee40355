// One LISTEN connection per pool: a coordination and an aggregate bus made
// with the same pool share it. Both get their wake-ups through it (counted:
// the coordination's floor re-checks stay at 0, the bus's delivered wake-ups
// grow with every send), both recover when it is terminated, a NOTIFY lost
// while it was down is made up by each family's re-check when it listens
// again, and one family stopping leaves the other listening.

import { withCoordinator } from '@vega/job-coordination'
import { run, shutdown } from '@vega/job-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { createPostgresAggregateBus } from '../src/index.js'
import { listenConnectionOf } from '../src/internal/listen-connection.js'
import { recorder } from './bus-support.js'
import { eventually, freshSchema, poolOf, rows, type Setup, setup, usePostgres } from './support.js'

const pg = usePostgres()
const WAIT = 30_000
// Long leases: a waiter's floor is a 10 s re-check, the bus's safety net a 1 s read.
const LEASE = 30_000
let admin: ReturnType<typeof poolOf>
beforeAll(() => {
  admin = poolOf(pg.url, { max: 2 })
})

const APP = `vega-shared-${process.pid}`

/** The LISTEN connections of the shared pool (its pool connections run other statements). */
async function listening(): Promise<number[]> {
  const found = await rows<{ pid: number }>(
    admin,
    "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query ~ '^(UN)?LISTEN ' ORDER BY pid",
    [APP],
  )
  return found.map((row) => row.pid)
}

/** Holds `key` in `holder` until `waiter` queued behind it, then lets it go: the waiter goes next by its wake-up. */
async function handOver(holder: Setup, waiter: Setup, key: string): Promise<void> {
  let open!: () => void
  const gate = new Promise<void>((resolve) => {
    open = resolve
  })
  const held = run(
    holder.runtime,
    withCoordinator(() => gate, holder.coordination.serialize, { key }),
  )
  await eventually(() => holder.coordination.inspect().leases === 1, WAIT, `${key} held`)
  const queuedBefore = waiter.events.filter((e) => e.type === 'coordination:queued').length
  const waiting = run(
    waiter.runtime,
    withCoordinator(async () => 'next', waiter.coordination.serialize, { key }),
  )
  await eventually(
    () => waiter.events.filter((e) => e.type === 'coordination:queued').length > queuedBefore,
    WAIT,
    `${key} queued`,
  )
  open()
  await held
  expect(await waiting).toBe('next')
}

describe('one LISTEN connection per pool', () => {
  it('a coordination and a bus on one pool share one LISTEN connection; both are woken through it, before and after it is terminated; stopping one keeps the other listening', async () => {
    const schema = freshSchema()
    const pool = poolOf(pg.url, { max: 6, idleTimeoutMillis: 0, application_name: APP })
    const shared = setup(pg.url, { pool, schema, leaseMs: LEASE })
    const bus = createPostgresAggregateBus({ pool, schema, partitions: 2, leaseMs: LEASE })
    // Another process on the same schema: its own pool, so its own LISTEN connection.
    const other = setup(pg.url, { schema, leaseMs: LEASE })
    const connection = listenConnectionOf(pool)
    const busChannel = `vega_job:${schema}:bus`
    const coordinationChannel = `vega_job:${schema}`
    const delivered = (channel: string) => connection.delivered.get(channel) ?? 0

    const rec = recorder()
    let consumer = bus.consume('sales.Order', rec.handle)
    await eventually(() => consumer.owned().length === 2, WAIT, 'the consumer owns both partitions')
    await eventually(async () => (await listening()).length === 1, WAIT, 'listening')
    const [first] = await listening()
    expect(connection.opens).toBe(1)

    /** n sends, each awaited until handled: every one must arrive as a wake-up of the bus's channel. */
    const busWakes = async (n: number) => {
      const before = delivered(busChannel)
      for (let i = 0; i < n; i++) {
        const seq = rec.handled.length + 1
        await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq } })
        await eventually(() => rec.handled.length === seq, WAIT, `seq ${seq} handled`)
      }
      // The floor (a read every second) would have handled them too, but then none was delivered here.
      await eventually(() => delivered(busChannel) - before >= n, WAIT, `${n} bus wake-ups`)
    }
    /** n hand-offs from the other process to this one: each a wake-up, none a floor re-check. */
    const coordinationWakes = async (n: number) => {
      const before = delivered(coordinationChannel)
      for (let i = 0; i < n; i++) await handOver(other, shared, `k${i}`)
      expect(shared.coordination.counters().floorRechecks).toBe(0)
      expect(delivered(coordinationChannel) - before).toBeGreaterThanOrEqual(n)
    }

    await busWakes(5)
    await coordinationWakes(5)
    expect(await listening()).toEqual([first])

    // Terminated: opened again (one connection still), and both families are woken again.
    await admin.query('SELECT pg_terminate_backend($1)', [first])
    await eventually(
      async () => {
        const now = await listening()
        return now.length === 1 && now[0] !== first && connection.opens === 2
      },
      WAIT,
      'listening again on one new connection',
    )
    await busWakes(5)
    await coordinationWakes(5)

    // Down for a while (its pool's Client class refuses to connect): a hand-off's NOTIFY
    // and a send's are lost. Listening again, each family re-checks: the waiter is granted
    // without waiting for its floor, and the message is read.
    const [second] = await listening()
    // Every connection the pool may need is open already (kept: idleTimeoutMillis 0).
    const warm = await Promise.all(Array.from({ length: 6 }, () => pool.connect()))
    for (const client of warm) client.release()
    const Client = (pool as unknown as { Client: new (options: object) => object }).Client
    class Refused extends Client {
      connect(): Promise<void> {
        return Promise.reject(new Error('refused by the test'))
      }
    }
    ;(pool as unknown as { Client: unknown }).Client = Refused
    let open!: () => void
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    const held = run(
      other.runtime,
      withCoordinator(() => gate, other.coordination.serialize, { key: 'lost' }),
    )
    await eventually(() => other.coordination.inspect().leases === 1, WAIT, 'lost held')
    const queuedBefore = shared.events.filter((e) => e.type === 'coordination:queued').length
    const waiting = run(
      shared.runtime,
      withCoordinator(async () => 'made up', shared.coordination.serialize, { key: 'lost' }),
    )
    // Queued: its acquire was answered "waiting", so only a wake-up or a re-check grants it.
    await eventually(
      () => shared.events.filter((e) => e.type === 'coordination:queued').length > queuedBefore,
      WAIT,
      'lost queued',
    )
    await admin.query('SELECT pg_terminate_backend($1)', [second])
    await eventually(async () => (await listening()).length === 0, WAIT, 'not listening')
    open()
    await held
    const seq = rec.handled.length + 1
    await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq } })
    ;(pool as unknown as { Client: unknown }).Client = Client
    expect(await waiting).toBe('made up')
    await eventually(() => rec.handled.length === seq, WAIT, 'the message sent while deaf')
    expect(shared.coordination.counters().floorRechecks).toBe(0)
    await eventually(async () => (await listening()).length === 1, WAIT, 'listening again')

    // The bus's consumer stops: the connection stays (same backend), the coordination is still woken.
    const [third] = await listening()
    await consumer.stop()
    await coordinationWakes(3)
    expect(await listening()).toEqual([third])

    // The bus consumes again, then the coordination stops (its runtime shut down): the bus is still woken.
    consumer = bus.consume('sales.Order', rec.handle)
    await eventually(() => consumer.owned().length === 2, WAIT, 'owns both again')
    await shutdown(shared.runtime)
    await busWakes(3)
    expect(await listening()).toEqual([third])

    // The last user gone, the connection closes.
    await consumer.stop()
    await eventually(
      async () => (await listening()).length === 0,
      WAIT,
      'closed with its last user',
    )
    await shutdown(other.runtime)
  }, 120_000)
})
