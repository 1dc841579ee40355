// Every strategy that parks a call across processes wakes it by message, with
// the clients users hold: each ioredis major in the supported range, on one
// primary and on a Redis Cluster. A wake-up message that is not heard is not
// a hang (the waiter's polling floor finds its turn within leaseMs / 3), so
// speed would hide it: each process counts the floor re-checks that found
// the call's turn had already come (`counters().floorWakeUps`), and a test
// fails as soon as one shows up where none may.
//
// The processes make their engine and issue their calls in one tick, before
// their client is ready, as a service does at boot: with ioredis 5 that is
// when a subscription made during the connection's handshake used to be lost.

import { type RedisClusterNodes, startRedisCluster } from '@vega/redis-server'
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RedisServer, startRedisServer } from './redis-server.js'
import { uniquePrefix } from './support.js'
import { type CallSpec, intervals, maxOverlap, startWorkers, type Worker } from './workers.js'

/** The majors of ioredis the package supports, each as the tests' workers import it. */
const MAJORS = [
  { name: 'ioredis 5', module: 'ioredis' },
  { name: 'ioredis 6', module: 'ioredis-6' },
] as const

type Place = 'one primary' | 'a 3-primary Redis Cluster'
const PLACES: Place[] = ['one primary', 'a 3-primary Redis Cluster']

const PROCESSES = 4
const CALLS = 50
/**
 * Long: a hand-off left to the floor would wait 10 s, and the tests would
 * crawl (and fail on the count first). A short floor would also race a
 * message that a loaded machine delivers late: the floor would find the
 * turn first and count a wake-up the messages were about to make.
 */
const LEASE = 30_000
/** keepLatest calls per process: one runs, one waits, the others are superseded. */
const LATEST_CALLS = 5
/** Dedupe rounds: each has joiners in three other processes. */
const ROUNDS = 6
const WAIT = 60_000 // generous: the machine may be loaded; the count, not the clock, decides

let server: RedisServer
let nodes: RedisClusterNodes
beforeAll(async () => {
  server = await startRedisServer()
  nodes = await startRedisCluster()
})
afterAll(async () => {
  await server?.dispose()
  await nodes?.dispose()
})

function start(
  where: Place,
  ioredis: string,
  prefix: string,
  boot?: { spec: CallSpec; count: number },
): Promise<Worker[]> {
  return startWorkers(PROCESSES, {
    url: server.url,
    ...(where === 'one primary' ? {} : { clusterPorts: [...nodes.ports] }),
    prefix,
    leaseMs: LEASE,
    ioredis,
    ...(boot === undefined ? {} : { boot }),
  })
}

/**
 * Starts the processes with their calls queued behind a holder in a process
 * of its own (`slots` gated bodies), and lets the holder go once each
 * process has a call waiting in Redis: the hand-offs cross processes from
 * the start. Returns the processes and the holder's process.
 */
async function startBehindHolder(
  where: Place,
  ioredis: string,
  spec: CallSpec,
  count: number,
  slots = 1,
): Promise<{ workers: Worker[]; holder: Worker }> {
  const prefix = uniquePrefix()
  const [holder] = await startWorkers(1, {
    url: server.url,
    ...(where === 'one primary' ? {} : { clusterPorts: [...nodes.ports] }),
    prefix,
    leaseMs: LEASE,
    ioredis,
  })
  const held = Array.from({ length: slots }, () =>
    holder!.call({ strategy: spec.strategy, key: spec.key, bodyMs: 0, gated: true }),
  )
  await Promise.all(held.map((n) => holder!.entered(n, WAIT)))
  const workers = await start(where, ioredis, prefix, { spec, count })
  await Promise.all(
    workers.map((w) =>
      w.waitFor(
        (m) => m.t === 'event' && (m.event as { type: string }).type === 'coordination:queued',
        WAIT,
        'a call queued',
      ),
    ),
  )
  for (const n of held) holder!.open(n)
  await Promise.all(held.map((n) => holder!.settled(n, WAIT)))
  return { workers, holder: holder! }
}

/** Every primary, through a client of the test's own. */
async function primaries(where: Place): Promise<{ nodes: Redis[]; close(): void }> {
  if (where === 'one primary') {
    const redis = new Redis(server.url)
    return { nodes: [redis], close: () => redis.disconnect() }
  }
  const cluster = new Cluster(nodes.ports.map((port) => ({ host: '127.0.0.1', port })))
  await cluster.ping() // a cluster client knows its nodes once connected
  return { nodes: cluster.nodes('master'), close: () => cluster.disconnect() }
}

interface Counts {
  floorRechecks: number
  floorWakeUps: number
}

async function countsOf(workers: Worker[]): Promise<Counts> {
  const all = await Promise.all(workers.map((w) => w.counters()))
  return {
    floorRechecks: all.reduce((sum, c) => sum + c.floorRechecks, 0),
    floorWakeUps: all.reduce((sum, c) => sum + c.floorWakeUps, 0),
  }
}

/**
 * Waits for the calls to settle, and fails as soon as the processes count
 * more than `allowed` floor wake-ups (a hand-off left to the floor), instead
 * of waiting minutes for calls paced by it.
 */
async function settledByMessage(
  workers: Worker[],
  calls: { worker: Worker; n: number }[],
  allowed: number,
): Promise<void> {
  let watching = true
  const settled = Promise.all(calls.map(({ worker, n }) => worker.settled(n, WAIT)))
  const watch = (async () => {
    while (watching) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      if (!watching) return
      const counts = await countsOf(workers)
      if (counts.floorWakeUps > allowed) {
        throw new Error(
          `${counts.floorWakeUps} wake-ups came by the polling floor (at most ${allowed} allowed): messages did not reach the waiters`,
        )
      }
    }
  })()
  try {
    await Promise.race([settled, watch])
  } finally {
    watching = false
    watch.catch(() => {})
  }
}

const bootCalls = (workers: Worker[]) =>
  workers.flatMap((worker) => worker.bootCalls.map((n) => ({ worker, n })))

function outcomes(workers: Worker[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const worker of workers) {
    for (const m of worker.of('settled')) {
      const state = m.state === 'cancelled' ? `cancelled:${String(m.reason)}` : String(m.state)
      counts.set(state, (counts.get(state) ?? 0) + 1)
    }
  }
  return counts
}

for (const major of MAJORS) {
  for (const where of PLACES) {
    describe(`hand-offs by message with ${major.name}, on ${where}`, () => {
      it(`serialize: ${PROCESSES} processes × ${CALLS} calls on one key, every hand-off by message`, async () => {
        const { workers, holder } = await startBehindHolder(
          where,
          major.module,
          { strategy: 'serialize', key: 'k', bodyMs: 1 },
          CALLS,
        )
        try {
          await settledByMessage(workers, bootCalls(workers), 0)
          expect(outcomes(workers)).toEqual(new Map([['success', PROCESSES * CALLS]]))
          expect(maxOverlap(intervals(workers))).toBe(1)
          expect((await countsOf(workers)).floorWakeUps).toBe(0)
        } finally {
          await Promise.all([holder, ...workers].map((w) => w.stop()))
        }
      })

      it('serialize, the subscriber connections killed mid-run (CLIENT KILL TYPE pubsub): re-subscribed, hand-offs come by message again', async () => {
        const { workers, holder } = await startBehindHolder(
          where,
          major.module,
          { strategy: 'serialize', key: 'k', bodyMs: 1 },
          CALLS,
        )
        const admin = await primaries(where)
        try {
          const all = bootCalls(workers)
          const entered = () => workers.reduce((sum, w) => sum + w.of('enter').length, 0)
          // A quarter of the bodies ran: every process waits on the key, and most hand-offs are still ahead.
          await Promise.race([
            new Promise<void>((resolve) => {
              const check = () => (entered() >= all.length / 4 ? resolve() : setTimeout(check, 5))
              check()
            }),
            settledByMessage(workers, all, 0),
          ])
          let killed = 0
          for (const node of admin.nodes) {
            killed += Number(await node.call('CLIENT', 'KILL', 'TYPE', 'pubsub'))
          }
          const enteredAtKill = entered()
          // Each process's subscriber connection listened to the key (one per process: its slot's primary).
          expect(killed).toBeGreaterThanOrEqual(PROCESSES)
          // Each subscription made again re-checks its key: what was published while it was down is found without the floor.
          await settledByMessage(workers, all, 0)
          expect(outcomes(workers)).toEqual(new Map([['success', PROCESSES * CALLS]]))
          expect(maxOverlap(intervals(workers))).toBe(1)
          // Most hand-offs happened after the kill, and not by the floor: the subscriptions are back.
          expect(all.length - enteredAtKill).toBeGreaterThan(all.length / 2)
          expect((await countsOf(workers)).floorWakeUps).toBe(0)
        } finally {
          admin.close()
          await Promise.all([holder, ...workers].map((w) => w.stop()))
        }
      })

      it(`serialize with concurrency 2: ${PROCESSES} processes × ${CALLS} calls on one key, every wake-up by message`, async () => {
        const { workers, holder } = await startBehindHolder(
          where,
          major.module,
          { strategy: 'serialize2', key: 'k', bodyMs: 1 },
          CALLS,
          2,
        )
        try {
          await settledByMessage(workers, bootCalls(workers), 0)
          expect(outcomes(workers)).toEqual(new Map([['success', PROCESSES * CALLS]]))
          expect(maxOverlap(intervals(workers))).toBeLessThanOrEqual(2)
          expect((await countsOf(workers)).floorWakeUps).toBe(0)
        } finally {
          await Promise.all([holder, ...workers].map((w) => w.stop()))
        }
      })

      it(`keepLatest: ${PROCESSES} processes × ${LATEST_CALLS} calls on one key, every hand-off and supersession by message`, async () => {
        const prefix = uniquePrefix()
        // Bodies long enough that the processes' calls overlap: the waiting call is handed the key, or superseded, from another process.
        const workers = await start(where, major.module, prefix, {
          spec: { strategy: 'keepLatest', key: 'k', bodyMs: 200 },
          count: LATEST_CALLS,
        })
        try {
          await settledByMessage(workers, bootCalls(workers), 0)
          const settled = outcomes(workers)
          // Every call settled, as a body that ran or as superseded.
          expect([...settled.keys()].sort()).toEqual(['cancelled:superseded', 'success'])
          expect(settled.get('success')! + settled.get('cancelled:superseded')!).toBe(
            PROCESSES * LATEST_CALLS,
          )
          expect(maxOverlap(intervals(workers))).toBe(1)
          expect((await countsOf(workers)).floorWakeUps).toBe(0)
        } finally {
          await Promise.all(workers.map((w) => w.stop()))
        }
      })

      it(`dedupe: ${ROUNDS} rounds, the joiners in the other processes get the leader's value by message`, async () => {
        const prefix = uniquePrefix()
        const outcomeOf = (worker: Worker, n: number) =>
          worker.messages.find((m) => m.t === 'settled' && m.n === n)?.promise
        // Round 0 at boot: every process calls at once; the first to reach Redis leads, the others join.
        const workers = await start(where, major.module, prefix, {
          spec: { strategy: 'dedupe', key: 'd', bodyMs: 2500, value: 0 },
          count: 1,
        })
        try {
          const boot = bootCalls(workers)
          await settledByMessage(workers, boot, 0)
          for (const { worker, n } of boot) {
            expect(outcomeOf(worker, n)).toEqual({ status: 'resolved', value: 0 })
          }
          const bootBodies = workers.reduce((sum, w) => sum + w.of('enter').length, 0)
          for (let round = 1; round < ROUNDS; round++) {
            const spec: CallSpec = { strategy: 'dedupe', key: 'd', bodyMs: 500, value: round }
            const leader = workers[round % PROCESSES]!
            const first = { worker: leader, n: leader.call(spec) }
            // The others call while the leader's body runs: they join it, and wait for its result.
            await leader.entered(first.n, WAIT)
            const joiners = workers
              .filter((w) => w !== leader)
              .map((worker) => ({ worker, n: worker.call(spec) }))
            await settledByMessage(workers, [first, ...joiners], 0)
            for (const { worker, n } of [first, ...joiners]) {
              expect(outcomeOf(worker, n)).toEqual({ status: 'resolved', value: round })
            }
          }
          // After boot, one body per round: every other call joined it.
          const bodies = workers.reduce((sum, w) => sum + w.of('enter').length, 0)
          expect(bodies - bootBodies).toBe(ROUNDS - 1)
          expect((await countsOf(workers)).floorWakeUps).toBe(0)
        } finally {
          await Promise.all(workers.map((w) => w.stop()))
        }
      })
    })
  }
}
