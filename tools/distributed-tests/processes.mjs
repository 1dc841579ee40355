// The parent side of the multi-process tests, for every engine: forked Node
// processes (each serving worker-child.mjs with its engine), the facts of the
// strategies across them measured inside the bodies, and the faults of a
// holder that dies or stops.

import { fork } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let calls = 0

/** A forked Node process with one runtime, driven over IPC; every message it sent is kept. */
export class Worker {
  messages = []
  /** The numbers of the calls it issued as it started (see startWorkers' `boot`). */
  bootCalls = []
  #listeners = new Set()

  constructor(child) {
    this.child = child
    child.on('message', (message) => {
      this.messages.push(message)
      for (const listener of [...this.#listeners]) listener()
    })
  }

  get pid() {
    return this.child.pid ?? -1
  }

  /** Resolves with the first message (already received, from `from` on, or coming) that matches. */
  waitFor(match, ms, what, from = 0) {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.messages.slice(from).find(match)
        if (found === undefined) return false
        clearTimeout(timer)
        this.#listeners.delete(check)
        resolve(found)
        return true
      }
      const timer = setTimeout(() => {
        this.#listeners.delete(check)
        reject(new Error(`worker ${this.pid}: no ${what} within ${ms} ms`))
      }, ms)
      if (!check()) this.#listeners.add(check)
    })
  }

  /** Starts a coordinated call; returns its number (messages about it carry `n`). */
  call(spec) {
    const n = ++calls
    this.child.send({ cmd: 'call', n, ...spec })
    return n
  }

  settled(n, ms) {
    return this.waitFor((m) => m.t === 'settled' && m.n === n, ms, `settlement of call ${n}`)
  }

  entered(n, ms) {
    return this.waitFor((m) => m.t === 'enter' && m.n === n, ms, `body of call ${n}`)
  }

  /** Lets a gated body end. */
  open(n) {
    this.child.send({ cmd: 'open', n })
  }

  /** Its coordination's counters right now (floor re-checks, floor wake-ups). */
  async counters() {
    const asked = ++calls
    this.child.send({ cmd: 'counters', asked })
    const reply = await this.waitFor(
      (m) => m.t === 'counters' && m.asked === asked,
      20_000,
      'counters',
    )
    return reply.counters
  }

  of(kind) {
    return this.messages.filter((m) => m.t === kind)
  }

  /** The last message of `kind` it sent, if any. */
  latest(kind) {
    return this.messages.findLast((m) => m.t === kind)
  }

  /** Sends a command over IPC. */
  send(message) {
    this.child.send(message)
  }

  /** Shuts its runtime down and resolves with what it kept then (`{ t: 'inspect', state }`), once it exited. */
  async stop() {
    if (this.child.exitCode !== null || this.child.signalCode !== null || !this.child.connected) {
      return undefined
    }
    const from = this.messages.length
    this.child.send({ cmd: 'shutdown' })
    const state = await this.waitFor((m) => m.t === 'inspect', 20_000, 'shutdown', from)
    await new Promise((resolve) => {
      if (this.child.exitCode !== null) resolve(undefined)
      else this.child.once('exit', resolve)
    })
    return state
  }

  kill(signal) {
    this.child.kill(signal)
  }
}

/** Forks `count` processes of `script` and resolves once each connected with `init`. */
export async function startWorkers(script, count, init) {
  const workers = Array.from(
    { length: count },
    () => new Worker(fork(script, [], { stdio: 'inherit' })),
  )
  const { boot, ...rest } = init
  for (const worker of workers) {
    if (boot !== undefined) {
      for (let i = 0; i < boot.count; i++) worker.bootCalls.push(++calls)
    }
    worker.child.send({
      cmd: 'init',
      ...rest,
      boot: boot === undefined ? undefined : { spec: boot.spec, ns: worker.bootCalls },
    })
  }
  await Promise.all(workers.map((w) => w.waitFor((m) => m.t === 'ready', 30_000, 'start')))
  return workers
}

/** Body intervals from every worker, sorted by entry. */
export function intervals(workers, ns) {
  const out = []
  for (const worker of workers) {
    for (const enter of worker.of('enter')) {
      if (ns !== undefined && !ns.has(enter.n)) continue
      const exit = worker.messages.find((m) => m.t === 'exit' && m.n === enter.n)
      out.push({ n: enter.n, from: enter.at, to: exit?.at ?? Number.POSITIVE_INFINITY })
    }
  }
  return out.sort((a, b) => a.from - b.from)
}

/** The most bodies inside at once. */
export function maxOverlap(list) {
  const edges = list.flatMap((i) => [
    { at: i.from, d: 1 },
    { at: i.to, d: -1 },
  ])
  // An exit and an entry at the same instant do not overlap.
  edges.sort((a, b) => a.at - b.at || a.d - b.d)
  let inside = 0
  let max = 0
  for (const edge of edges) {
    inside += edge.d
    max = Math.max(max, inside)
  }
  return max
}

/**
 * The table of the strategies across processes, each row with 2–4 of the
 * engine's processes, checked from what the bodies report. `start()` resolves
 * with 4 workers on a fresh namespace; `nothingLeft()` checks the storage once
 * every worker shut down (only fences, and dedupe results, may remain).
 */
export function describeAcrossProcesses({ title, lease, start, nothingLeft }) {
  const WAIT = 20 * lease // generous: the machine may be loaded; nothing here measures speed
  describe(title, () => {
    let workers
    beforeAll(async () => {
      workers = await start()
    })
    afterAll(async () => {
      const states = await Promise.all((workers ?? []).map((w) => w.stop()))
      // Shutdown released everything: no process keeps a waiter or a lease.
      for (const state of states) expect(state?.state).toEqual({ waiters: 0, leases: 0, keys: 0 })
      await nothingLeft()
    })

    it('dedupe: one body across processes; every caller in every process gets its value', async () => {
      const [a, b, c, d] = workers
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
      const [a, b, c] = workers
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
      // Once it ended, the next call anywhere runs: from the moment the
      // holder's release reached the storage. On an engine that keeps order
      // the holder's answer does not wait for that (its own next call is
      // sent after the release anyway), so a call another process makes as
      // soon as it hears of the answer can still find the key held and be
      // dropped; asked again, it runs. Well before the holder's lease could
      // have run out by itself (its last renewal was at most a third of a
      // lease before it ended), so a release that never arrived fails here.
      const drops = []
      for (;;) {
        const again = b.call({ strategy: 'exhaust', key: 'ex', bodyMs: 10, value: 'b2' })
        const s = await b.settled(again, WAIT)
        if (s.promise.status === 'resolved') {
          expect(s.promise.value).toBe('b2')
          break
        }
        expect([s.state, s.reason]).toEqual(['cancelled', 'exhaust-dropped'])
        drops.push(again)
        expect(drops.length, 'the key stayed held after its holder ended').toBeLessThan(10)
        await new Promise((resolve) => setTimeout(resolve, lease / 30))
      }
    })

    it('restart: a new call anywhere proceeds at once; the running one in another process is cancelled (abort)', async () => {
      const [a, b] = workers
      const old = a.call({
        strategy: 'restart',
        key: 'rs',
        bodyMs: 10 * lease,
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
      const oldToken = a.of('token').find((m) => m.n === old)
      const newToken = b.of('token').find((m) => m.n === newer)
      expect(newToken.fence).toBeGreaterThan(oldToken.fence)
      // The new call's coordination:restart names the holder it evicted in the other process.
      const restartEvent = await b.waitFor(
        (m) => m.t === 'event' && m.event.type === 'coordination:restart',
        WAIT,
        'the restart event',
      )
      expect(restartEvent.event).toMatchObject({
        cancelledPeerIds: [],
        remoteHolders: [expect.any(String)],
      })
      // Cancelled as soon as it heard (a wake-up), or at its next renewal (every lease / 3) at the latest; never after its long body.
      const enteredNew = b.of('enter').find((m) => m.n === newer).at
      expect(so.at - enteredNew).toBeLessThan(2 * lease)
    })

    it(`serialize: one FIFO per key across processes; 12 calls from 4 processes never overlap, each in its process’s order`, async () => {
      const ns = []
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
        (b) => workers.flatMap((w) => w.of('token')).find((t) => t.n === b.n).fence,
      )
      expect([...fences].sort((x, y) => x - y)).toEqual(fences)
      // Within each process, its calls ran in call order (they reached the storage in that order).
      for (const w of workers) {
        const mine = ns.filter((x) => x.w === w).map((x) => x.n)
        expect(bodies.filter((b) => mine.includes(b.n)).map((b) => b.n)).toEqual(mine)
      }
    })

    it('serialize with concurrency 2: at most 2 bodies at once across processes, and 2 do run together', async () => {
      const ns = []
      for (const w of workers)
        for (let i = 0; i < 2; i++)
          ns.push({ w, n: w.call({ strategy: 'serialize2', key: 's2', bodyMs: 150, value: i }) })
      await Promise.all(ns.map(({ w, n }) => w.settled(n, WAIT)))
      const bodies = intervals(workers, new Set(ns.map((x) => x.n)))
      expect(bodies).toHaveLength(8)
      expect(maxOverlap(bodies)).toBe(2)
    })

    it('keepLatest: one running + one waiting across processes; a newer waiting call in another process supersedes the older', async () => {
      const [a, b, c] = workers
      const running = a.call({ strategy: 'keepLatest', key: 'kl', bodyMs: 800, value: 'a' })
      await a.entered(running, WAIT)
      const older = b.call({ strategy: 'keepLatest', key: 'kl', bodyMs: 50, value: 'b' })
      await b.waitFor((m) => m.t === 'called' && m.n === older, WAIT, 'the older call')
      // Let the older waiter reach the storage before the newer one.
      await new Promise((resolve) => setTimeout(resolve, 100))
      const newer = c.call({ strategy: 'keepLatest', key: 'kl', bodyMs: 50, value: 'c' })
      const [sa, sb, sc] = await Promise.all([
        a.settled(running, WAIT),
        b.settled(older, WAIT),
        c.settled(newer, WAIT),
      ])
      expect(sa.promise).toEqual({ status: 'resolved', value: 'a' })
      expect([sb.state, sb.reason]).toEqual(['cancelled', 'superseded'])
      // Unlike the local keepLatest: superseded from another process, its caller rejects.
      expect(sb.promise.status).toBe('rejected')
      expect(sc.promise).toEqual({ status: 'resolved', value: 'c' })
      const bodies = intervals(workers, new Set([running, older, newer]))
      expect(bodies.map((i) => i.n)).toEqual([running, newer])
      expect(maxOverlap(bodies)).toBe(1)
    })
  })
}

/**
 * A holder that dies or stops: SIGKILL of a serialize holder and of a dedupe
 * leader, SIGSTOP past the lease. `workersOn(count)` resolves with that many
 * workers on a fresh namespace (killed after the file).
 */
export function describeHolderFaults({ title, lease, workersOn }) {
  const WAIT = 30 * lease
  describe(title, () => {
    it('SIGKILL of the serialize holder mid-body: the waiter in another process takes over within a lease', async () => {
      const [a, b] = await workersOn(2)
      const held = a.call({
        strategy: 'serialize',
        key: 'k',
        bodyMs: 60 * lease,
        value: 'a',
        fence: true,
      })
      await a.waitFor((m) => m.t === 'token' && m.n === held, WAIT, 'the holder’s token')
      const next = b.call({ strategy: 'serialize', key: 'k', bodyMs: 50, value: 'b', fence: true })
      await b.waitFor((m) => m.t === 'called' && m.n === next, WAIT, 'the waiter')
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(b.of('enter')).toEqual([])
      const killedAt = Number(process.hrtime.bigint()) / 1e6
      a.kill('SIGKILL')
      const settled = await b.settled(next, WAIT)
      expect(settled.promise).toEqual({ status: 'resolved', value: 'b' })
      const entered = b.of('enter').find((m) => m.n === next).at
      // The dead holder's lease had to expire first; a wake-up or the polling floor then woke the waiter.
      expect(entered - killedAt).toBeLessThan(5 * lease)
      const oldFence = a.of('token')[0].fence
      expect(b.of('token')[0].fence).toBeGreaterThan(oldFence)
      expect((await b.stop())?.state).toEqual({ waiters: 0, leases: 0, keys: 0 })
    })

    it('SIGKILL of the dedupe leader: one waiting caller takes over and runs the body; the others join it', async () => {
      const [a, b, c] = await workersOn(3)
      const leader = a.call({ strategy: 'dedupe', key: 'k', bodyMs: 60 * lease, value: 'a' })
      await a.entered(leader, WAIT)
      const nb = b.call({ strategy: 'dedupe', key: 'k', bodyMs: 400, value: 'b' })
      const nc = c.call({ strategy: 'dedupe', key: 'k', bodyMs: 400, value: 'c' })
      await Promise.all([
        b.waitFor((m) => m.t === 'called' && m.n === nb, WAIT, 'b called'),
        c.waitFor((m) => m.t === 'called' && m.n === nc, WAIT, 'c called'),
      ])
      await new Promise((resolve) => setTimeout(resolve, 100))
      a.kill('SIGKILL')
      const [sb, sc] = await Promise.all([b.settled(nb, WAIT), c.settled(nc, WAIT)])
      const ran = [...b.of('enter'), ...c.of('enter')]
      expect(ran).toHaveLength(1)
      const winner = ran[0].n === nb ? 'b' : 'c'
      expect(sb.promise).toEqual({ status: 'resolved', value: winner })
      expect(sc.promise).toEqual({ status: 'resolved', value: winner })
      await Promise.all([b.stop(), c.stop()])
    })

    it('SIGSTOP past the lease, then SIGCONT: the next holder runs; the paused body sees LeaseLostError and its value reaches no one', async () => {
      const [a, b] = await workersOn(2)
      const held = a.call({
        strategy: 'serialize',
        key: 'k',
        bodyMs: 6 * lease,
        value: 'late',
        fence: true,
      })
      await a.waitFor((m) => m.t === 'token' && m.n === held, WAIT, 'the holder’s token')
      const next = b.call({
        strategy: 'serialize',
        key: 'k',
        bodyMs: 2 * lease,
        value: 'b',
        fence: true,
      })
      await b.waitFor((m) => m.t === 'called' && m.n === next, WAIT, 'the waiter')
      a.kill('SIGSTOP')
      // B's grant comes once A's lease expired in the storage; A cannot renew while stopped.
      await b.entered(next, WAIT)
      a.kill('SIGCONT')
      const sa = await a.settled(held, WAIT)
      expect(sa.state).toBe('error')
      expect(sa.outcome).toEqual({
        status: 'error',
        error: expect.objectContaining({ name: 'LeaseLostError' }),
      })
      expect(sa.promise).toEqual({
        status: 'rejected',
        error: expect.objectContaining({ name: 'LeaseLostError' }),
      })
      const aborted = a.of('aborted').find((m) => m.n === held)
      expect(aborted?.reason).toEqual(expect.objectContaining({ name: 'LeaseLostError' }))
      // The paused body was still inside while the new holder ran: fencing is what protects the write.
      await b.waitFor((m) => m.t === 'token' && m.n === next, WAIT, 'the next holder’s token')
      expect(b.of('token')[0].fence).toBeGreaterThan(a.of('token')[0].fence)
      const sb = await b.settled(next, WAIT)
      expect(sb.promise).toEqual({ status: 'resolved', value: 'b' })
      await Promise.all([a.stop(), b.stop()])
    })
  })
}
