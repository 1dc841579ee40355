// Wake-ups are per key: each key has its own sharded pub/sub channel, and a
// process listens only to the channels of the keys it waits on. A holder's
// release hands a single-slot key to the first waiter in the same script, so
// the waiter starts on the message alone, without a round trip of its own.
//
// A "process" here is one createRedisCoordination with its own client: what
// a process hears is what its subscriber (the client's duplicate) receives,
// counted on that real connection. Both facts run on one server and on a
// Redis Cluster of three primaries (sharded subscribers, one per primary).

import { withCoordinator } from '@vega/job-coordination'
import { type Runtime, run, settle, shutdown } from '@vega/job-core'
import { type RedisClusterNodes, startRedisCluster } from '@vega/redis-server'
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RedisServer, startRedisServer } from './redis-server.js'
import { type Setup, setup } from './support.js'

let server: RedisServer
let nodes: RedisClusterNodes
const opened: Setup[] = []
const admins: (Redis | Cluster)[] = []
beforeAll(async () => {
  server = await startRedisServer()
  nodes = await startRedisCluster()
})
afterAll(async () => {
  for (const { redis } of opened) redis.disconnect()
  for (const admin of admins) admin.disconnect()
  await server?.dispose()
  await nodes?.dispose()
})

type Place = 'one server' | 'a 3-primary Redis Cluster'

function client(where: Place): Redis | Cluster {
  if (where === 'one server') return new Redis(server.url, { maxRetriesPerRequest: null })
  return new Cluster(
    nodes.ports.map((port) => ({ host: '127.0.0.1', port })),
    { redisOptions: { maxRetriesPerRequest: null } },
  )
}

/** A process of its own: a client whose subscriber duplicate counts the channels of what it receives. */
interface Listener extends Setup {
  readonly heard: string[]
}

function process_(where: Place, prefix: string, leaseMs: number): Listener {
  const redis = client(where)
  const heard: string[] = []
  const duplicate = redis.duplicate.bind(redis) as (...args: unknown[]) => Redis | Cluster
  redis.duplicate = ((...args: unknown[]) => {
    const subscriber = duplicate(...args)
    subscriber.on('smessage', (channel: string) => heard.push(channel))
    return subscriber
  }) as never
  const value = setup('', { redis: redis as never, prefix, leaseMs })
  opened.push(value)
  return { ...value, heard }
}

/** Resolves once `condition` holds (checked every 5 ms). */
function until(condition: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (condition()) resolve()
      else setTimeout(check, 5)
    }
    check()
  })
}

/** Resolves once `count` calls of the runtime said they wait in Redis's queue. */
function queued(value: Setup, count: number): Promise<void> {
  return until(() => value.events.filter((e) => e.type === 'coordination:queued').length >= count)
}

/** Resolves once every channel has exactly one subscriber, summed over every primary (the subscriptions hold). */
async function subscribed(where: Place, channels: string[]): Promise<void> {
  const admin = where === 'one server' ? new Redis(server.url) : client(where)
  admins.push(admin)
  await admin.ping() // a cluster client knows its nodes once connected
  const servers = admin instanceof Cluster ? admin.nodes('master') : [admin]
  for (;;) {
    const counts = channels.map(() => 0)
    for (const node of servers) {
      const reply = (await node.call('PUBSUB', 'SHARDNUMSUB', ...channels)) as (string | number)[]
      for (let i = 0; i < channels.length; i++) counts[i]! += Number(reply[2 * i + 1])
    }
    if (counts.every((count) => count === 1)) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** Runs a body that holds its key until `gate` resolves; resolves once it entered. */
function hold(runtime: Runtime, value: Setup, key: string, gate: Promise<void>): Promise<void> {
  return new Promise((entered) => {
    void run(
      runtime,
      withCoordinator(
        async () => {
          entered()
          await gate
        },
        value.cluster.serialize,
        { key },
      ),
    )
  })
}

/** Every key under the prefix, on every primary. */
async function keysOf(redis: Redis | Cluster, prefix: string): Promise<string[]> {
  const servers = redis instanceof Cluster ? redis.nodes('master') : [redis]
  const keys = await Promise.all(servers.map((node) => node.keys(`${prefix}:*`)))
  return keys.flat().sort()
}

for (const where of ['one server', 'a 3-primary Redis Cluster'] as Place[]) {
  describe(`wake-ups per key, on ${where}`, () => {
    it('8 processes × 1,000 keys: each process hears the keys it waits on, and only those', async () => {
      const leaseMs = 30_000 // far above the test: every grant below comes from pub/sub, not the polling floor
      const prefix = `wk${process.pid}${where.length}`
      const holder = process_(where, prefix, leaseMs)
      const processes = Array.from({ length: 8 }, () => process_(where, prefix, leaseMs))
      const keys = Array.from({ length: 1000 }, (_, i) => `key-${i}`)
      let open!: () => void
      const gate = new Promise<void>((resolve) => {
        open = resolve
      })
      await Promise.all(keys.map((key) => hold(holder.runtime, holder, key, gate)))

      // Process i waits on 25 × (i + 1) keys of its own (900 in all; 100 keys nobody else waits on).
      const waitsOf: string[][] = []
      let next = 0
      for (let i = 0; i < processes.length; i++) {
        waitsOf.push(keys.slice(next, next + 25 * (i + 1)))
        next += 25 * (i + 1)
      }
      const ran = processes.map(() => [] as string[])
      const calls = processes.flatMap((p, i) =>
        waitsOf[i]!.map((key) =>
          run(
            p.runtime,
            withCoordinator(
              async () => {
                ran[i]!.push(key)
              },
              p.cluster.serialize,
              { key },
            ),
          ),
        ),
      )
      await Promise.all(processes.map((p, i) => queued(p, waitsOf[i]!.length)))
      const channelOf = (key: string) => `${prefix}:{${JSON.stringify(key)}}:~wake`
      await subscribed(where, waitsOf.flat().map(channelOf))

      open()
      await Promise.all(calls)
      for (let i = 0; i < processes.length; i++) {
        const own = new Set(waitsOf[i]!.map(channelOf))
        const heard = processes[i]!.heard
        expect(ran[i]!.sort()).toEqual([...waitsOf[i]!].sort())
        // One hand-off message per key it waited on: proportional to its keys, never to all 1,000.
        expect(heard).toHaveLength(waitsOf[i]!.length)
        expect(heard.every((channel) => own.has(channel))).toBe(true)
      }
      // The holder waited on nothing: it listened to nothing.
      expect(holder.heard).toEqual([])
      await Promise.all([holder, ...processes].map((p) => shutdown(p.runtime)))
    })

    it('a hand-off: the waiter in another process starts on the release’s message alone, with no round trip of its own', async () => {
      const prefix = `wh${process.pid}${where.length}`
      const holder = process_(where, prefix, 30_000)
      const waiter = process_(where, prefix, 30_000)
      let open!: () => void
      const gate = new Promise<void>((resolve) => {
        open = resolve
      })
      await hold(holder.runtime, holder, 'doc', gate)
      // Its requests (scripts) and the one read that follows its subscription, counted on its client.
      let sent = 0
      let reads = 0
      const client = waiter.redis as unknown as Record<
        string,
        (...args: unknown[]) => Promise<unknown>
      >
      const evalsha = client.evalsha!.bind(waiter.redis)
      client.evalsha = (...args: unknown[]) => {
        sent++
        return evalsha(...args)
      }
      const get = client.get!.bind(waiter.redis)
      client.get = (...args: unknown[]) => get(...args).finally(() => reads++)
      let sentBeforeBody = -1
      const call = run(
        waiter.runtime,
        withCoordinator(
          async () => {
            sentBeforeBody = sent
            return 'mine'
          },
          waiter.cluster.serialize,
          { key: 'doc' },
        ),
      )
      // Its one request (queued), then, once its subscription holds, one read of who holds the key (the holder).
      await queued(waiter, 1)
      await until(() => reads === 1)
      open()
      expect(await call).toBe('mine')
      expect(sentBeforeBody).toBe(1)
      expect(waiter.heard).toEqual([`${prefix}:{"doc"}:~wake`])
      await Promise.all([holder, waiter].map((p) => shutdown(p.runtime)))
      expect(await keysOf(holder.redis as unknown as Redis | Cluster, prefix)).toEqual([
        `${prefix}:{"doc"}:fence`,
      ])
    })
  })
}

describe('a process that hears nothing (its subscriber never connects)', () => {
  /** A process whose subscriber points at a closed port: every message to it is lost. */
  function deaf(prefix: string, leaseMs: number): Setup {
    const redis = new Redis(server.url, { maxRetriesPerRequest: null })
    redis.duplicate = (() => {
      const nowhere = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: null })
      nowhere.on('error', () => {})
      return nowhere
    }) as Redis['duplicate']
    const value = setup('', { redis, prefix, leaseMs })
    opened.push(value)
    return value
  }

  it('serialize: a hand-off it never hears is found at its next re-check (the key is in its name)', async () => {
    const prefix = `wd${process.pid}`
    const holder = process_('one server', prefix, 900)
    const waiter = deaf(prefix, 900)
    let open!: () => void
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    await hold(holder.runtime, holder, 'k', gate)
    const call = run(
      waiter.runtime,
      withCoordinator(async () => 'handed', waiter.cluster.serialize, { key: 'k' }),
    )
    await queued(waiter, 1)
    open()
    expect(await call).toBe('handed')
    await Promise.all([holder, waiter].map((p) => shutdown(p.runtime)))
    expect(await keysOf(holder.redis, prefix)).toEqual([`${prefix}:{"k"}:fence`])
  })

  it('serialize: its own next call starts on its own release’s reply, not on a message it cannot hear nor on its floor', async () => {
    const prefix = `wo${process.pid}`
    // A floor of 10 s: a hand-off left to it would show in the counters and in the test's time.
    const alone = deaf(prefix, 30_000)
    let open!: () => void
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    await hold(alone.runtime, alone, 'k', gate)
    const next = run(
      alone.runtime,
      withCoordinator(async () => 'next', alone.cluster.serialize, { key: 'k' }),
    )
    await queued(alone, 1)
    open()
    expect(await next).toBe('next')
    expect(alone.cluster.counters()).toEqual({ floorRechecks: 0, floorWakeUps: 0 })
    await shutdown(alone.runtime)
    expect(await keysOf(alone.redis, prefix)).toEqual([`${prefix}:{"k"}:fence`])
  })

  it('keepLatest: superseded by a newer call it never heard of, it ends superseded at its next re-check and does not come back ahead of the newer call', async () => {
    const prefix = `wl${process.pid}`
    const holder = process_('one server', prefix, 900)
    const older = deaf(prefix, 900)
    const newer = process_('one server', prefix, 900)
    let open!: () => void
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    const ran: string[] = []
    const entered = new Promise<void>((resolve) => {
      void run(
        holder.runtime,
        withCoordinator(
          async () => {
            ran.push('holder')
            resolve()
            await gate
          },
          holder.cluster.keepLatest,
          { key: 'k' },
        ),
      )
    })
    await entered
    const olderCall = run(
      older.runtime,
      withCoordinator(
        async () => {
          ran.push('older')
        },
        older.cluster.keepLatest,
        { key: 'k' },
      ),
    )
    await queued(older, 1)
    const newerCall = run(
      newer.runtime,
      withCoordinator(
        async () => {
          ran.push('newer')
        },
        newer.cluster.keepLatest,
        { key: 'k' },
      ),
    )
    await queued(newer, 1)
    const outcome = await settle(olderCall)
    expect(outcome.status).toBe('cancelled')
    expect(olderCall.cancelReason).toBe('superseded')
    open()
    await newerCall
    expect(ran).toEqual(['holder', 'newer'])
    await Promise.all([holder, older, newer].map((p) => shutdown(p.runtime)))
  })
})
