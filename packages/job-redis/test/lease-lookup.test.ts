// How a body finds its lease: a stale body (its lease lost, its task already
// ended) hears LeaseLostError from both fencingToken and assertLease, as a
// rejected promise; two runtimes of one process with the same task ids never
// see each other's leases.

import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, run, settle, shutdown, type TaskContext } from '@vega/job-core'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertLease,
  createRedisCoordination,
  type FencingToken,
  fencingToken,
  LeaseLostError,
} from '../src/index.js'
import { type RedisServer, startRedisServer } from './redis-server.js'
import { uniquePrefix } from './support.js'

let server: RedisServer
let admin: Redis
const clients: Redis[] = []
beforeAll(async () => {
  server = await startRedisServer()
  admin = client()
})
afterAll(async () => {
  for (const c of clients) c.disconnect()
  await server?.dispose()
})

function client(): Redis {
  const redis = new Redis(server.url, { maxRetriesPerRequest: null })
  redis.on('error', () => {})
  clients.push(redis)
  return redis
}

function coordinated() {
  const prefix = uniquePrefix()
  // Renewals every 500 ms: a loaded machine still answers a grant within the bound (1500 ms).
  const cluster = createRedisCoordination({ redis: client(), prefix, leaseMs: 1500 })
  const runtime = createRuntime({ plugins: [installCoordination, cluster.plugin] })
  return { prefix, cluster, runtime }
}

/** Resolves when the signal aborts, with its reason. */
function aborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason)
  return new Promise((resolve) =>
    signal.addEventListener('abort', () => resolve(signal.reason), { once: true }),
  )
}

/** What a body saw after its lease was taken away behind its back. */
interface StaleView {
  reason: unknown
  token: PromiseSettledResult<FencingToken>
  asserted: PromiseSettledResult<FencingToken>
  threwSync: unknown
}

describe('a stale body', () => {
  it('gets LeaseLostError from fencingToken(ctx) and assertLease(ctx), as rejected promises, for as long as it runs', async () => {
    const { prefix, cluster, runtime } = coordinated()
    let view: StaleView | undefined
    let exitBody!: () => void
    const exited = new Promise<void>((resolve) => {
      exitBody = resolve
    })
    const body = async (ctx: TaskContext) => {
      const granted = await fencingToken(ctx)
      // Another party takes the key: the next renewal finds someone else's lock.
      await admin.set(`${prefix}:{${granted.key}}:lock`, 'someone-else', 'PX', 10_000)
      const reason = await aborted(ctx.signal)
      // The task has ended in error by now; the body goes on regardless.
      let token: Promise<FencingToken> | undefined
      let threwSync: unknown
      try {
        token = fencingToken(ctx)
      } catch (error) {
        threwSync = error
      }
      const [settledToken, asserted] = await Promise.allSettled([
        token ?? Promise.reject(new Error('threw')),
        assertLease(ctx),
      ])
      view = { reason, token: settledToken!, asserted: asserted!, threwSync }
      exitBody()
      return 'late'
    }
    const task = run(runtime, withCoordinator(body, cluster.serialize, { key: 'stale' }))
    const outcome = await settle(task)
    expect(outcome.status).toBe('error')
    expect((outcome as { error: unknown }).error).toBeInstanceOf(LeaseLostError)
    await exited
    const seen = view!
    expect(seen.reason).toBeInstanceOf(LeaseLostError)
    expect(seen.threwSync).toBeUndefined()
    expect(seen.token.status).toBe('rejected')
    expect((seen.token as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError)
    expect(seen.asserted.status).toBe('rejected')
    expect((seen.asserted as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError)
    await shutdown(runtime)
    expect(cluster.inspect()).toEqual({ waiters: 0, leases: 0, keys: 0 })
  })

  it('outside a leased body, fencingToken(ctx) rejects with a TypeError rather than throwing', async () => {
    const { cluster, runtime } = coordinated()
    let result: Promise<FencingToken> | undefined
    let threw: unknown
    await run(runtime, (ctx) => {
      try {
        result = fencingToken(ctx)
      } catch (error) {
        threw = error
      }
    })
    expect(threw).toBeUndefined()
    await expect(result).rejects.toThrow(/holds no distributed lease/)
    await expect(fencingToken(undefined as never)).rejects.toBeInstanceOf(TypeError)
    await shutdown(runtime)
    expect(cluster.inspect().leases).toBe(0)
  })
})

describe('two runtimes in one process', () => {
  it('run leased bodies with the same task id at once: each finds its own lease, and one losing it leaves the other alone', async () => {
    const a = coordinated()
    const b = coordinated()
    let release!: () => void
    const together = new Promise<void>((resolve) => {
      release = resolve
    })
    let inside = 0
    const seen: Record<string, { taskId: number; key: string; fence: number }> = {}
    const body = (name: string) => async (ctx: TaskContext) => {
      if (++inside === 2) release()
      await together
      const token = await fencingToken(ctx)
      const checked = await assertLease(ctx)
      expect(checked).toEqual(token)
      seen[name] = { taskId: ctx.taskId, key: token.key, fence: token.fence }
      return token.key
    }
    const ta = run(a.runtime, withCoordinator(body('a'), a.cluster.serialize, { key: 'doc-a' }))
    const tb = run(b.runtime, withCoordinator(body('b'), b.cluster.serialize, { key: 'doc-b' }))
    expect(ta.id).toBe(tb.id)
    const [ka, kb] = await Promise.all([ta, tb])
    expect(seen.a!.taskId).toBe(seen.b!.taskId)
    expect(ka).not.toBe(kb)
    expect(seen.a!.key).toBe(ka)
    expect(seen.b!.key).toBe(kb)
    await Promise.all([shutdown(a.runtime), shutdown(b.runtime)])
  })

  it('a stale body in one runtime gets LeaseLostError while the other runtime’s body with the same id keeps its lease', async () => {
    const a = coordinated()
    const b = coordinated()
    let bothIn!: () => void
    const together = new Promise<void>((resolve) => {
      bothIn = resolve
    })
    let inside = 0
    let aLost!: () => void
    const aLostSeen = new Promise<void>((resolve) => {
      aLost = resolve
    })
    const results: Record<string, PromiseSettledResult<FencingToken>[]> = {}
    const bodyA = async (ctx: TaskContext) => {
      if (++inside === 2) bothIn()
      await together
      const token = await fencingToken(ctx)
      await admin.set(`${a.prefix}:{${token.key}}:lock`, 'someone-else', 'PX', 10_000)
      await aborted(ctx.signal)
      results.a = await Promise.allSettled([fencingToken(ctx), assertLease(ctx)])
      aLost()
    }
    const bodyB = async (ctx: TaskContext) => {
      if (++inside === 2) bothIn()
      await together
      await aLostSeen
      results.b = await Promise.allSettled([fencingToken(ctx), assertLease(ctx)])
    }
    const ta = run(a.runtime, withCoordinator(bodyA, a.cluster.serialize, { key: 'same' }))
    const tb = run(b.runtime, withCoordinator(bodyB, b.cluster.serialize, { key: 'same' }))
    expect(ta.id).toBe(tb.id)
    const [oa, ob] = await Promise.all([settle(ta), settle(tb)])
    expect(oa.status).toBe('error')
    expect(ob.status).toBe('success')
    for (const r of results.a!) {
      expect(r.status).toBe('rejected')
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError)
    }
    for (const r of results.b!) expect(r.status).toBe('fulfilled')
    await Promise.all([shutdown(a.runtime), shutdown(b.runtime)])
  })
})
