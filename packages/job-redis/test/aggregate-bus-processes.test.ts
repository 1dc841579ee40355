import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { busStatsWhen, checkLogs, readLogs } from '@vega/distributed-tests/bus-processes'
import { type RedisClusterNodes, startRedisCluster } from '@vega/redis-server'
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBusWorker } from './bus-processes.js'
import { partitionKey } from './bus-support.js'
import { type RedisServer, startRedisServer } from './redis-server.js'
import { eventually, uniquePrefix } from './support.js'
import type { Worker } from './workers.js'

const now = () => Number(process.hrtime.bigint()) / 1e6

let server: RedisServer
let nodes: RedisClusterNodes
let redis: Redis
let cluster: Cluster
let dir: string
const workers: Worker[] = []

beforeAll(async () => {
  ;[server, nodes] = await Promise.all([startRedisServer(), startRedisCluster()])
  redis = new Redis(server.url, { maxRetriesPerRequest: null })
  cluster = new Cluster(
    nodes.ports.map((port) => ({ host: '127.0.0.1', port })),
    { redisOptions: { maxRetriesPerRequest: null } },
  )
  cluster.on('error', () => {})
  dir = mkdtempSync(join(tmpdir(), 'vega-job-bus-'))
}, 60_000)

afterAll(async () => {
  for (const worker of workers) if (worker.child.exitCode === null) worker.kill('SIGKILL')
  redis.disconnect()
  cluster.disconnect()
  await Promise.all([server.dispose(), nodes?.dispose()])
  rmSync(dir, { recursive: true, force: true })
})

/** Where the forked workers run: one primary, or a 3-primary cluster. */
interface Where {
  readonly name: string
  /** The worker options that point at it. */
  at(): { url: string; cluster?: readonly number[] }
  client(): Redis | Cluster
}

const targets: Where[] = [
  { name: 'one primary', at: () => ({ url: server.url }), client: () => redis },
  {
    name: 'a 3-primary cluster',
    at: () => ({ url: '', cluster: nodes.ports }),
    client: () => cluster,
  },
]

async function lag(where: Where, prefix: string, partitions: number): Promise<number> {
  const client = where.client()
  const lengths = await Promise.all(
    Array.from({ length: partitions }, (_, p) =>
      client.xlen(partitionKey(prefix, 'sales.Order', p, 'p')),
    ),
  )
  return lengths.reduce((sum, n) => sum + n, 0)
}

describe.each(targets)('the aggregate bus across processes, on $name', (where) => {
  it('3 consumers and a producer, 20k messages over 500 ids, one consumer SIGKILLed mid-run and another started', async () => {
    const prefix = uniquePrefix()
    const partitions = 32
    const leaseMs = 1000
    const ids = Array.from({ length: 500 }, (_, i) => `order-${i}`)
    const perId = 40
    const logs: string[] = []
    const startConsumer = async () => {
      const log = join(dir, `${prefix}-${logs.length}.log`)
      logs.push(log)
      const worker = await startBusWorker({ ...where.at(), prefix, partitions, leaseMs, log })
      workers.push(worker)
      worker.child.send({ cmd: 'consume', parallelism: 16, handlerMs: 1 })
      await worker.waitFor((m) => m.t === 'consuming', 10_000, 'consume')
      return worker
    }
    const consumers = [await startConsumer(), await startConsumer(), await startConsumer()]
    const producer = await startBusWorker({ ...where.at(), prefix, partitions, leaseMs })
    workers.push(producer)
    producer.child.send({ cmd: 'produce', ids, perId })

    // Kill the consumer that owns partitions once a quarter of the messages were handled.
    const handledSoFar = () =>
      consumers.reduce((sum, c) => sum + Number(c.latest('progress')?.handled ?? 0), 0)
    await eventually(() => handledSoFar() >= 5000, 60_000, '5000 handled')
    const victim = consumers[1] as Worker
    const ownedAtKill = ((victim.latest('progress')?.owned ?? []) as number[]).length
    const killedAt = now()
    victim.kill('SIGKILL')
    const killed = new Map([[1, killedAt]])
    consumers.push(await startConsumer())
    const live = [consumers[0], consumers[2], consumers[3]] as Worker[]

    await producer.waitFor((m) => m.t === 'produced', 60_000, 'all sent')
    await eventually(
      async () => (await lag(where, prefix, partitions)) === 0,
      60_000,
      'every message acknowledged',
    )

    // Partitions end evenly spread over the three live consumers: none owns more than ⌈32 / 3⌉ = 11.
    const owned = () => live.map((c) => (c.latest('progress')?.owned as number[]) ?? [])
    await eventually(
      () => {
        const all = owned().flat()
        return (
          all.length === partitions &&
          new Set(all).size === partitions &&
          owned().every((o) => o.length <= 11)
        )
      },
      10_000,
      'partitions evenly spread',
    )
    for (const worker of live) worker.child.send({ cmd: 'stop' })
    await Promise.all(live.map((w) => w.waitFor((m) => m.t === 'stopped', 20_000, 'stop')))

    const { violations, redelivered, handled } = checkLogs(readLogs(logs), ids, perId, killed)
    expect(violations.slice(0, 10)).toEqual([])
    expect(handled).toBeGreaterThanOrEqual(20_000)
    expect(ownedAtKill).toBeGreaterThan(0)
    // The killed consumer's messages in flight were handled again by their next owner.
    expect(redelivered).toBeGreaterThan(0)
  }, 120_000)

  it('a consumer paused (SIGSTOP) past its lease is fenced out: its late acknowledgement is refused', async () => {
    const prefix = uniquePrefix()
    const partitions = 1
    const leaseMs = 600
    const logA = join(dir, `${prefix}-a.log`)
    const logB = join(dir, `${prefix}-b.log`)
    const logs = [logA, logB]
    const a = await startBusWorker({ ...where.at(), prefix, partitions, leaseMs, log: logA })
    workers.push(a)
    const producer = await startBusWorker({ ...where.at(), prefix, partitions, leaseMs })
    workers.push(producer)
    producer.child.send({ cmd: 'produce', ids: ['slow', 'x', 'y'], perId: 3 })
    await producer.waitFor((m) => m.t === 'produced', 10_000, 'sent')
    producer.child.send({ cmd: 'stop' })
    a.child.send({ cmd: 'consume', parallelism: 1, slow: { slow: 400 } })
    // a is inside the slow handler: pause it there.
    await eventually(() => readLogs([logA]).some((l) => l.kind === 'E'), 10_000, 'a entered')
    a.kill('SIGSTOP')
    const pausedAt = now()
    const b = await startBusWorker({ ...where.at(), prefix, partitions, leaseMs, log: logB })
    workers.push(b)
    b.child.send({ cmd: 'consume', parallelism: 4 })
    await eventually(
      async () => (await lag(where, prefix, partitions)) === 0,
      20_000,
      'b handled everything',
    )
    const resumedAt = now()
    a.kill('SIGCONT')
    type Stats = { acksRefused: number; handled: number; leasesLost: number }
    // Its slow handler ends after the resume, and acknowledges.
    const stats = await busStatsWhen<Stats>(
      a,
      (seen) => seen.acksRefused > 0,
      5000,
      'a tried to acknowledge',
    )
    a.child.send({ cmd: 'stop' })
    b.child.send({ cmd: 'stop' })
    await Promise.all([a, b].map((w) => w.waitFor((m) => m.t === 'stopped', 20_000, 'stop')))

    const lines = readLogs(logs)
    const ofA = lines.filter((l) => l.proc === 0)
    const ofB = lines.filter((l) => l.proc === 1)
    // a entered one handler before the pause and started none after it.
    expect(ofA.filter((l) => l.kind === 'E')).toHaveLength(1)
    expect(ofA.filter((l) => l.kind === 'E' && l.at > pausedAt)).toEqual([])
    // Its late result was refused; b handled every message, with a newer fence.
    expect(stats).toMatchObject({ acksRefused: 1, handled: 0 })
    expect(stats?.leasesLost).toBeGreaterThanOrEqual(1)
    const fenceOfA = (ofA[0] as { fence: number }).fence
    expect(ofB.every((l) => l.fence > fenceOfA)).toBe(true)
    expect(new Set(ofB.filter((l) => l.kind === 'X').map((l) => `${l.id}${l.seq}`)).size).toBe(9)
    expect(ofB.filter((l) => l.kind === 'E' && l.at < resumedAt)).toHaveLength(9)
    const { violations } = checkLogs(
      lines.filter((l) => l.proc === 1),
      ['slow', 'x', 'y'],
      3,
      new Map(),
    )
    expect(violations).toEqual([])
  }, 60_000)
})
