import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { busStatsWhen, checkLogs, readLogs } from '@vega/distributed-tests/bus-processes'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BusWorker, startBusWorker } from './bus-processes.js'
import { eventually, uniqueSchema } from './bus-support.js'
import { type PostgresServer, startPostgres } from './postgres.js'

const now = () => Number(process.hrtime.bigint()) / 1e6

let server: PostgresServer
let pool: pg.Pool
let dir: string
const workers: BusWorker[] = []

beforeAll(async () => {
  server = await startPostgres()
  pool = new pg.Pool({ connectionString: server.url, max: 4 })
  pool.on('error', () => {})
  dir = mkdtempSync(join(tmpdir(), 'vega-job-pg-bus-'))
}, 60_000)

afterAll(async () => {
  for (const worker of workers) if (worker.child.exitCode === null) worker.kill('SIGKILL')
  await pool?.end()
  await server?.dispose()
  rmSync(dir, { recursive: true, force: true })
})

/** Messages not yet handled, over every partition. */
async function lag(schema: string): Promise<number> {
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".bus_message`)
  return rows[0].n
}

interface Run {
  readonly schema: string
  readonly logs: string[]
  consumer(options?: {
    parallelism?: number
    transaction?: boolean
    slow?: Record<string, number>
    handlerMs?: number
  }): Promise<BusWorker>
  producer(): Promise<BusWorker>
}

function run(partitions: number, leaseMs: number, effects?: string): Run {
  const schema = uniqueSchema()
  const logs: string[] = []
  const base = {
    url: server.url,
    schema,
    partitions,
    leaseMs,
    ...(effects === undefined ? {} : { effects }),
  }
  return {
    schema,
    logs,
    async consumer(options = {}) {
      const log = join(dir, `${schema}-${logs.length}.log`)
      logs.push(log)
      const worker = await startBusWorker({ ...base, log })
      workers.push(worker)
      worker.send({ cmd: 'consume', parallelism: 16, ...options })
      await worker.waitFor((m) => m.t === 'consuming', 10_000, 'consume')
      return worker
    },
    async producer() {
      const worker = await startBusWorker(base)
      workers.push(worker)
      return worker
    },
  }
}

const ownedBy = (worker: BusWorker): number[] =>
  (worker.latest('progress')?.owned as number[]) ?? []
const handledBy = (worker: BusWorker): number => Number(worker.latest('progress')?.handled ?? 0)

async function stopAll(live: readonly BusWorker[]): Promise<void> {
  for (const worker of live) worker.send({ cmd: 'stop' })
  await Promise.all(live.map((w) => w.waitFor((m) => m.t === 'stopped', 30_000, 'stop')))
}

describe('the aggregate bus across processes, on Postgres', () => {
  it('3 consumers and a producer, 8k messages over 200 ids, one consumer SIGKILLed mid-run and another started', async () => {
    const partitions = 16
    const r = run(partitions, 1000)
    const ids = Array.from({ length: 200 }, (_, i) => `order-${i}`)
    const perId = 40
    const consumer = () => r.consumer({ handlerMs: 1 })
    // The victim's handlers take 2 s each, so every partition it owns with a
    // message waiting has one in flight when it is killed, however fast the
    // machine: redelivery is then certain, not a matter of timing.
    const consumers = [await consumer(), await r.consumer({ handlerMs: 2000 }), await consumer()]
    const producer = await r.producer()
    producer.send({ cmd: 'produce', ids, perId })

    const handledSoFar = () => consumers.reduce((sum, c) => sum + handledBy(c), 0)
    const victim = consumers[1] as BusWorker
    await eventually(
      () => handledSoFar() >= 2000 && ownedBy(victim).length > 0,
      90_000,
      '2000 handled, the victim owning partitions',
    )
    const ownedAtKill = ownedBy(victim).length
    const killedAt = now()
    victim.kill('SIGKILL')
    consumers.push(await consumer())
    const live = [consumers[0], consumers[2], consumers[3]] as BusWorker[]

    await producer.waitFor((m) => m.t === 'produced', 90_000, 'all sent')
    await eventually(async () => (await lag(r.schema)) === 0, 90_000, 'every message acknowledged')
    // Partitions end evenly spread over the three live consumers: none owns more than ⌈16 / 3⌉ = 6.
    await eventually(
      () => {
        const all = live.flatMap(ownedBy)
        return (
          all.length === partitions &&
          new Set(all).size === partitions &&
          live.every((c) => ownedBy(c).length <= 6)
        )
      },
      15_000,
      'partitions evenly spread',
    )
    producer.send({ cmd: 'stop' })
    await stopAll(live)
    const { violations, redelivered, handled } = checkLogs(
      readLogs(r.logs),
      ids,
      perId,
      new Map([[1, killedAt]]),
    )
    expect(violations.slice(0, 10)).toEqual([])
    expect(handled).toBeGreaterThanOrEqual(ids.length * perId)
    expect(ownedAtKill).toBeGreaterThan(0)
    // The killed consumer's messages in flight were handled again by their next owner.
    expect(redelivered).toBeGreaterThan(0)
  }, 180_000)

  it('a consumer paused (SIGSTOP) past its lease is fenced out: its late acknowledgement is refused', async () => {
    const r = run(1, 600)
    const producer = await r.producer()
    producer.send({ cmd: 'produce', ids: ['slow', 'x', 'y'], perId: 3 })
    await producer.waitFor((m) => m.t === 'produced', 20_000, 'sent')
    producer.send({ cmd: 'stop' })
    const a = await r.consumer({ parallelism: 1, slow: { slow: 400 } })
    // a is inside the slow handler: pause it there.
    await eventually(
      () => readLogs([r.logs[0] as string]).some((l) => l.kind === 'E'),
      20_000,
      'a entered',
    )
    a.kill('SIGSTOP')
    const pausedAt = now()
    const b = await r.consumer({ parallelism: 4 })
    await eventually(async () => (await lag(r.schema)) === 0, 30_000, 'b handled everything')
    const resumedAt = now()
    a.kill('SIGCONT')
    type Stats = { acksRefused: number; handled: number; leasesLost: number }
    const stats = await busStatsWhen<Stats>(
      a,
      (seen) => seen.acksRefused > 0,
      10_000,
      'a tried to acknowledge',
    )
    await stopAll([a, b])
    const lines = readLogs(r.logs)
    const ofA = lines.filter((l) => l.proc === 0)
    const ofB = lines.filter((l) => l.proc === 1)
    // a entered one handler before the pause and started none after it.
    expect(ofA.filter((l) => l.kind === 'E')).toHaveLength(1)
    expect(ofA.filter((l) => l.kind === 'E' && l.at > pausedAt)).toEqual([])
    expect(stats).toMatchObject({ acksRefused: 1, handled: 0 })
    const fenceOfA = (ofA[0] as { fence: number }).fence
    expect(ofB.every((l) => l.fence > fenceOfA)).toBe(true)
    expect(new Set(ofB.filter((l) => l.kind === 'X').map((l) => `${l.id}${l.seq}`)).size).toBe(9)
    expect(ofB.filter((l) => l.kind === 'E' && l.at < resumedAt)).toHaveLength(9)
    expect(checkLogs(ofB, ['slow', 'x', 'y'], 3, new Map()).violations).toEqual([])
  }, 90_000)
})

describe('transactional handling across processes', () => {
  async function effectsTable(): Promise<string> {
    const table = `effects_${Math.random().toString(36).slice(2, 8)}`
    // One row per message at most: a second commit of one message's effect would violate it.
    await pool.query(
      `CREATE TABLE ${table} (n bigserial, id text NOT NULL, seq int NOT NULL, fence bigint NOT NULL, PRIMARY KEY (id, seq))`,
    )
    return table
  }

  it('a consumer SIGKILLed inside its handler transaction: its writes and ack roll back together; the next owner handles the message once', async () => {
    const table = await effectsTable()
    const r = run(1, 800, table)
    const producer = await r.producer()
    producer.send({ cmd: 'produce', ids: ['a', 'b', 'c'], perId: 4 })
    await producer.waitFor((m) => m.t === 'produced', 20_000, 'sent')
    producer.send({ cmd: 'stop' })
    // a writes a's first effect through tx, then sits in its handler: killed there.
    const a = await r.consumer({ parallelism: 1, transaction: true, slow: { a: 60_000 } })
    await eventually(
      () => readLogs([r.logs[0] as string]).some((l) => l.kind === 'E' && l.id === 'a'),
      20_000,
      'a inside a',
    )
    // Its write is in its open transaction: nobody else sees it.
    expect((await pool.query(`SELECT * FROM ${table} WHERE id = 'a'`)).rows).toEqual([])
    const killedAt = now()
    a.kill('SIGKILL')
    const b = await r.consumer({ parallelism: 4, transaction: true })
    await eventually(async () => (await lag(r.schema)) === 0, 30_000, 'b handled everything')
    await stopAll([b])
    const { rows } = await pool.query(`SELECT id, seq, fence FROM ${table} ORDER BY id, seq`)
    // Exactly one effect per message, all of them b's (a's uncommitted write rolled back).
    expect(rows.map((row) => `${row.id}${row.seq}`)).toEqual([
      'a1',
      'a2',
      'a3',
      'a4',
      'b1',
      'b2',
      'b3',
      'b4',
      'c1',
      'c2',
      'c3',
      'c4',
    ])
    const lines = readLogs(r.logs)
    const fenceOfA = Number(lines.find((l) => l.proc === 0)?.fence)
    // a may have handled (and committed) b1 or c1 before it took a1; a1's effect is b's, never a's.
    const a1 = rows.find((row) => row.id === 'a' && row.seq === 1)
    expect(Number(a1?.fence)).toBeGreaterThan(fenceOfA)
    // b saw a1 as a redelivery (a had read it).
    expect(
      lines.find((l) => l.proc === 1 && l.kind === 'E' && l.id === 'a' && l.seq === 1)?.attempt,
    ).toBe(2)
    expect(checkLogs(lines, ['a', 'b', 'c'], 4, new Map([[0, killedAt]])).violations).toEqual([])
  }, 90_000)

  it('Postgres restarted (immediate stop) mid-run: consumers recover by themselves; every effect committed once, per id in order', async () => {
    const table = await effectsTable()
    const r = run(8, 1000, table)
    const ids = Array.from({ length: 40 }, (_, i) => `order-${i}`)
    const producer = await r.producer()
    producer.send({ cmd: 'produce', ids, perId: 10 })
    await producer.waitFor((m) => m.t === 'produced', 30_000, 'first half sent')
    const consumers = [
      await r.consumer({ parallelism: 8, transaction: true, handlerMs: 2 }),
      await r.consumer({ parallelism: 8, transaction: true, handlerMs: 2 }),
    ]
    await eventually(
      () => consumers.reduce((sum, c) => sum + handledBy(c), 0) >= 100,
      30_000,
      '100 handled',
    )
    await server.restart({ mode: 'immediate' })
    // Sent after the restart: the second half, seq 11 … 20.
    producer.send({ cmd: 'produce', ids, perId: 20, from: 11 })
    await eventually(
      async () => {
        try {
          return (
            (await lag(r.schema)) === 0 &&
            (await pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n === 800
          )
        } catch {
          return false
        }
      },
      60_000,
      'every message handled',
    )
    producer.send({ cmd: 'stop' })
    await stopAll(consumers)
    const { rows } = await pool.query(`SELECT id, seq FROM ${table} ORDER BY n`)
    // Every message's effect committed once (the primary key refuses a second), and per id in
    // order: an id's next message starts only once the previous one's transaction committed.
    expect(rows).toHaveLength(800)
    for (const id of ids) {
      expect(rows.filter((row) => row.id === id).map((row) => row.seq)).toEqual(
        Array.from({ length: 20 }, (_, i) => i + 1),
      )
    }
    // Handlers may overlap here (an attempt whose lease ran out while Postgres was down goes on
    // until its transaction is refused or rolled back); the logs still show every message handled.
    const done = new Set(
      readLogs(r.logs)
        .filter((l) => l.kind === 'X')
        .map((l) => `${l.id}#${l.seq}`),
    )
    expect(done.size).toBe(800)
  }, 120_000)
})
