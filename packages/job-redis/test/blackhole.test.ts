// Every Redis round trip is bounded: through a proxy that stops forwarding
// without closing (a silent partition), every call and every consumer step
// ends within its bound, and everything recovers when it forwards again.

import { type Blackhole, startBlackhole } from '@vega/blackhole'
import { withCoordinator } from '@vega/job-coordination'
import { run, settle, shutdown, type Task } from '@vega/job-core'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createRedisAggregateBus, LeaseLostError, RedisUnavailableError } from '../src/index.js'
import { busSetup } from './bus-support.js'
import { type RedisServer, startRedisServer } from './redis-server.js'
import { eventually, setup } from './support.js'

// Bounds short enough for a quick test, long enough that a loaded machine answers in time before the cut.
const LEASE = 1500
const TIMEOUT = 700
const WAIT = 20_000

let server: RedisServer
let proxy: Blackhole
/** The proxy's URL: clients connect there instead of to the server. */
const proxyUrl = () => `redis://127.0.0.1:${proxy.port}`
beforeAll(async () => {
  server = await startRedisServer()
  proxy = await startBlackhole(server.port)
})
afterAll(async () => {
  await proxy?.close()
  await server?.dispose()
})

/** The operation named by each RedisUnavailableError the consumer warned about. */
function warnedOperations(spy: { mock: { calls: unknown[][] } }): Set<string> {
  const operations = new Set<string>()
  for (const [message] of spy.mock.calls) {
    const match = /RedisUnavailableError: @vega\/job-redis (\w+):/.exec(String(message))
    if (match) operations.add(match[1]!)
  }
  return operations
}

describe('a silent partition between a consumer and Redis', () => {
  it('ends every step of the consumer within its bound (tick, read, ack, stats), loses its leases, and recovers when traffic flows again', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const direct = busSetup(server.url, { partitions: 4, leaseMs: LEASE })
    const viaProxy = new Redis(proxyUrl(), { maxRetriesPerRequest: null })
    viaProxy.on('error', () => {})
    try {
      const bus = createRedisAggregateBus({
        redis: viaProxy,
        prefix: direct.prefix,
        partitions: 4,
        leaseMs: LEASE,
        connectTimeoutMs: TIMEOUT,
      })
      const handled: string[] = []
      let releaseHeld!: () => void
      const held = new Promise<void>((resolve) => {
        releaseHeld = resolve
      })
      let heldStarted!: () => void
      const heldIsRunning = new Promise<void>((resolve) => {
        heldStarted = resolve
      })
      let heldSignal: AbortSignal | undefined
      const consumer = bus.consume<{ n: number }>('sales.Order', async (delivery, signal) => {
        if (delivery.id === 'held' && heldSignal === undefined) {
          heldSignal = signal
          heldStarted()
          await held
        }
        handled.push(`${delivery.id}:${delivery.body.n}`)
      })
      await eventually(() => consumer.owned().length === 4, WAIT, 'all partitions owned')
      await direct.bus.send({ aggregate: 'sales.Order', id: 'a', body: { n: 1 } })
      await eventually(() => handled.includes('a:1'), WAIT, 'a:1 handled')
      await direct.bus.send({ aggregate: 'sales.Order', id: 'held', body: { n: 1 } })
      await heldIsRunning

      proxy.cut()
      // The handler finishes during the partition: its ack cannot be confirmed, and it does not hang.
      releaseHeld()
      const cutAt = performance.now()
      await expect(consumer.stats()).rejects.toBeInstanceOf(RedisUnavailableError)
      await expect(bus.send({ aggregate: 'sales.Order', id: 'b', body: { n: 1 } })).rejects.toThrow(
        RedisUnavailableError,
      )
      expect(performance.now() - cutAt).toBeLessThan(WAIT)
      await eventually(() => consumer.owned().length === 0, WAIT, 'leases lost locally')
      expect(heldSignal?.reason).toBeInstanceOf(LeaseLostError)
      await eventually(
        () => ['tick', 'read', 'ack'].every((op) => warnedOperations(warn).has(op)),
        WAIT,
        `tick, read and ack each ended with RedisUnavailableError (saw ${[...warnedOperations(warn)].join(', ')})`,
      )

      proxy.restore()
      await eventually(() => consumer.owned().length === 4, WAIT, 'partitions taken again')
      await direct.bus.send({ aggregate: 'sales.Order', id: 'a', body: { n: 2 } })
      // The held message was never acknowledged: its partition's next owner delivers it again.
      await eventually(
        () => handled.includes('a:2') && handled.filter((h) => h === 'held:1').length >= 1,
        WAIT,
        'a:2 and held:1 handled after the partition healed',
      )
      const stats = await consumer.stats()
      expect(stats.lag).toBe(0)
      await consumer.stop()
    } finally {
      warn.mockRestore()
      proxy.restore()
      viaProxy.disconnect()
      direct.close()
    }
  })
})

describe('a silent partition between coordination and Redis', () => {
  it('ends a call within connectTimeoutMs with RedisUnavailableError, a holder loses its lease, and later calls succeed again', async () => {
    const s = setup(proxyUrl(), { leaseMs: LEASE, connectTimeoutMs: TIMEOUT })
    try {
      let holderSignal: AbortSignal | undefined
      /** A holder whose body runs; asked again if a loaded machine could not grant it in time. */
      // Wrapped: a task is a thenable, so an async function cannot return it as is.
      const startHolder = async (): Promise<{ task: Task<unknown> }> => {
        for (let attempt = 1; ; attempt++) {
          let entered!: () => void
          const inside = new Promise<'entered'>((resolve) => {
            entered = () => resolve('entered')
          })
          const task = run(
            s.runtime,
            withCoordinator(
              async (ctx) => {
                holderSignal = ctx.signal
                entered()
                await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))
              },
              s.cluster.serialize,
              { key: 'held' },
            ),
          )
          const first = await Promise.race([inside, settle(task)])
          if (first === 'entered') return { task }
          if (attempt === 10) throw new Error('the holder was never granted in 10 attempts')
        }
      }
      const { task: holder } = await startHolder()
      proxy.cut()
      const call = run(
        s.runtime,
        withCoordinator(async () => 'x', s.cluster.exhaust, { key: 'other' }),
      )
      const outcome = await settle(call)
      expect(outcome.status).toBe('error')
      expect((outcome as { error: unknown }).error).toBeInstanceOf(RedisUnavailableError)
      const held = await settle(holder)
      expect(held.status).toBe('error')
      expect(holderSignal?.reason).toBeInstanceOf(LeaseLostError)
      proxy.restore()
      await eventually(
        async () => {
          const again = withCoordinator(async () => 'y', s.cluster.exhaust, { key: 'again' })
          return (await settle(run(s.runtime, again))).status === 'success'
        },
        WAIT,
        'a call succeeds once traffic flows again',
      )
      await shutdown(s.runtime)
      expect(s.cluster.inspect()).toEqual({ waiters: 0, leases: 0, keys: 0 })
    } finally {
      proxy.restore()
      s.redis.disconnect()
    }
  })
})
