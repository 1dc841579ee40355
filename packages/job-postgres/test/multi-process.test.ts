// The strategies across processes, each row of the table with 2–4 forked
// Node processes (one runtime and one pg Pool each, the built package),
// checked from what the bodies report.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshSchema, poolOf, rows, usePostgres } from './support.js'
import { intervals, maxOverlap, startWorkers, type Worker } from './workers.js'

const LEASE = 1500
const WAIT = 20 * LEASE // generous: the machine may be loaded; nothing here measures speed

const pg = usePostgres()

// The user passes their own pool: the newest pg 8 and the oldest the peer range accepts.
for (const [client, module] of [
  ['pg 8.23', 'pg'],
  ['pg 8.0.3', 'pg-8-0'],
] as const) {
  describe(`the strategies across 4 processes on one Postgres, with ${client} pools`, () => {
    let workers: Worker[]
    const schema = freshSchema()
    beforeAll(async () => {
      workers = await startWorkers(4, { url: pg.url, schema, leaseMs: LEASE, pg: module })
    })
    afterAll(async () => {
      const states = await Promise.all((workers ?? []).map((w) => w.stop()))
      // Shutdown released everything: no process keeps a waiter or a lease.
      for (const state of states)
        expect(state?.state).toMatchObject({ waiters: 0, leases: 0, keys: 0 })
      // Nothing but fence rows (and dedupe results until their lease-long expiry) remains.
      const pool = poolOf(pg.url)
      const left = await rows(
        pool,
        `SELECT 'holders' AS t, count(*)::int AS n FROM "${schema}".holders
       UNION ALL SELECT 'waiters', count(*)::int FROM "${schema}".waiters`,
      )
      expect(left).toEqual([
        { t: 'holders', n: 0 },
        { t: 'waiters', n: 0 },
      ])
      const fences = await rows(pool, `SELECT count(*)::int AS n FROM "${schema}".fences`)
      expect(fences[0]?.n).toBeGreaterThan(0)
    })

    it('dedupe: one body across processes; every caller in every process gets its value', async () => {
      const [a, b, c, d] = workers as [Worker, Worker, Worker, Worker]
      const first = a.call({ strategy: 'dedupe', key: 'dd', bodyMs: 600, value: { doc: 42 } })
      await a.entered(first, WAIT)
      const others = [b, c, d].map((w) => ({
        w,
        n: w.call({ strategy: 'dedupe', key: 'dd', bodyMs: 600, value: 'mine' }),
      }))
      const settled = await Promise.all([
        a.settled(first, WAIT),
        ...others.map(({ w, n }) => w.settled(n, WAIT)),
      ])
      expect(settled.map((m) => m.promise)).toEqual(
        Array(4).fill({ status: 'resolved', value: { doc: 42 } }),
      )
      expect(settled[0]?.state).toBe('success')
      expect(settled.slice(1).map((m) => [m.state, m.reason])).toEqual(
        Array(3).fill(['cancelled', 'dedupe']),
      )
      const ns = new Set([first, ...others.map((o) => o.n)])
      expect(intervals(workers, ns).map((i) => i.n)).toEqual([first])
    })

    it('exhaust: a call proceeds only if no body for the key runs anywhere; else exhaust-dropped', async () => {
      const [a, b, c] = workers as [Worker, Worker, Worker]
      const first = a.call({ strategy: 'exhaust', key: 'ex', bodyMs: 600, value: 'a' })
      await a.entered(first, WAIT)
      const nb = b.call({ strategy: 'exhaust', key: 'ex', bodyMs: 10, value: 'b' })
      const nc = c.call({ strategy: 'exhaust', key: 'ex', bodyMs: 10, value: 'c' })
      const [sa, sb, sc] = await Promise.all([
        a.settled(first, WAIT),
        b.settled(nb, WAIT),
        c.settled(nc, WAIT),
      ])
      expect(sa?.promise).toEqual({ status: 'resolved', value: 'a' })
      for (const s of [sb, sc]) {
        expect([s?.state, s?.reason]).toEqual(['cancelled', 'exhaust-dropped'])
        expect(s?.promise).toEqual({
          status: 'rejected',
          error: { name: 'CancelledError', reason: 'exhaust-dropped' },
        })
      }
      expect(intervals(workers, new Set([first, nb, nc])).map((i) => i.n)).toEqual([first])
      // Once it ended, the next call anywhere runs.
      const again = b.call({ strategy: 'exhaust', key: 'ex', bodyMs: 10, value: 'b2' })
      expect((await b.settled(again, WAIT)).promise).toEqual({ status: 'resolved', value: 'b2' })
    })

    it('restart: a new call anywhere proceeds at once; the running one in another process is cancelled (abort)', async () => {
      const [a, b] = workers as [Worker, Worker]
      const old = a.call({
        strategy: 'restart',
        key: 'rs',
        bodyMs: 10 * LEASE,
        value: 'old',
        fence: true,
      })
      await a.waitFor((m) => m.t === 'token' && m.n === old, WAIT, 'the old token')
      const newer = b.call({
        strategy: 'restart',
        key: 'rs',
        bodyMs: 200,
        value: 'new',
        fence: true,
      })
      const [so, sn] = await Promise.all([a.settled(old, WAIT), b.settled(newer, WAIT)])
      expect([so.state, so.reason]).toEqual(['cancelled', 'abort'])
      expect(sn.promise).toEqual({ status: 'resolved', value: 'new' })
      const oldToken = a.of('token').find((m) => m.n === old)!
      const newToken = b.of('token').find((m) => m.n === newer)!
      expect(newToken.fence as number).toBeGreaterThan(oldToken.fence as number)
      // The new call's coordination:restart names the holder it evicted in the other process.
      const restartEvent = await b.waitFor(
        (m) => m.t === 'event' && (m.event as { type: string }).type === 'coordination:restart',
        WAIT,
        'the restart event',
      )
      expect(restartEvent.event).toMatchObject({
        cancelledPeerIds: [],
        remoteHolders: [expect.any(String)],
      })
      // Cancelled as soon as it heard (NOTIFY), or at its next renewal (every LEASE/3) at the latest; never after its long body.
      const enteredNew = b.of('enter').find((m) => m.n === newer)!.at!
      expect(so.at! - enteredNew).toBeLessThan(2 * LEASE)
    })

    it('serialize: one across processes FIFO per key; 12 calls from 4 processes never overlap, each in its process’s order', async () => {
      const ns: { w: Worker; n: number }[] = []
      for (let round = 0; round < 3; round++) {
        for (const w of workers)
          ns.push({
            w,
            n: w.call({ strategy: 'serialize', key: 'se', bodyMs: 40, value: round, fence: true }),
          })
      }
      const settled = await Promise.all(ns.map(({ w, n }) => w.settled(n, WAIT)))
      expect(settled.every((m) => m.state === 'success')).toBe(true)
      const bodies = intervals(workers, new Set(ns.map((x) => x.n)))
      expect(bodies).toHaveLength(12)
      expect(maxOverlap(bodies)).toBe(1)
      // Tokens grow in the order the bodies ran.
      const fences = bodies.map(
        (b) => workers.flatMap((w) => w.of('token')).find((t) => t.n === b.n)!.fence as number,
      )
      expect([...fences].sort((x, y) => x - y)).toEqual(fences)
      // Within each process, its calls ran in call order (they reached Postgres in that order).
      for (const w of workers) {
        const mine = ns.filter((x) => x.w === w).map((x) => x.n)
        expect(bodies.filter((b) => mine.includes(b.n)).map((b) => b.n)).toEqual(mine)
      }
    })

    it('serialize with concurrency 2: at most 2 bodies at once across processes, and 2 do run together', async () => {
      const ns: { w: Worker; n: number }[] = []
      for (const w of workers)
        for (let i = 0; i < 2; i++)
          ns.push({ w, n: w.call({ strategy: 'serialize2', key: 's2', bodyMs: 150, value: i }) })
      await Promise.all(ns.map(({ w, n }) => w.settled(n, WAIT)))
      const bodies = intervals(workers, new Set(ns.map((x) => x.n)))
      expect(bodies).toHaveLength(8)
      expect(maxOverlap(bodies)).toBe(2)
    })

    it('keepLatest: one running + one waiting across processes; a newer waiting call in another process supersedes the older', async () => {
      const [a, b, c] = workers as [Worker, Worker, Worker]
      const running = a.call({ strategy: 'keepLatest', key: 'kl', bodyMs: 800, value: 'a' })
      await a.entered(running, WAIT)
      const older = b.call({ strategy: 'keepLatest', key: 'kl', bodyMs: 50, value: 'b' })
      await b.waitFor((m) => m.t === 'called' && m.n === older, WAIT, 'the older call')
      // Let the older waiter reach Postgres before the newer one.
      await new Promise((resolve) => setTimeout(resolve, 100))
      const newer = c.call({ strategy: 'keepLatest', key: 'kl', bodyMs: 50, value: 'c' })
      const [sa, sb, sc] = await Promise.all([
        a.settled(running, WAIT),
        b.settled(older, WAIT),
        c.settled(newer, WAIT),
      ])
      expect(sa.promise).toEqual({ status: 'resolved', value: 'a' })
      expect([sb.state, sb.reason]).toEqual(['cancelled', 'superseded'])
      // Unlike the local keepLatest (README, strategy table): superseded from another process, its caller rejects.
      expect((sb.promise as { status: string }).status).toBe('rejected')
      expect(sc.promise).toEqual({ status: 'resolved', value: 'c' })
      const bodies = intervals(workers, new Set([running, older, newer]))
      expect(bodies.map((i) => i.n)).toEqual([running, newer])
      expect(maxOverlap(bodies)).toBe(1)
    })
  })
}
