// A renewal checks the granting server's run_id, as assertLease does: a Redis
// restarted from a snapshot still holds the lock, yet the lease is lost.

import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, run, settle, shutdown, type TaskContext } from '@vega/job-core'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createRedisCoordination, fencingToken, LeaseLostError } from '../src/index.js'
import { type RedisServer, startRedisServer } from './redis-server.js'
import { uniquePrefix } from './support.js'

const LEASE = 10_000

let server: RedisServer
const clients: Redis[] = []
beforeAll(async () => {
  server = await startRedisServer()
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

it('a Redis restarted from its snapshot still has the lock, but the next renewal loses the lease (another run_id)', async () => {
  const admin = client()
  const prefix = uniquePrefix()
  const cluster = createRedisCoordination({ redis: client(), prefix, leaseMs: LEASE })
  const runtime = createRuntime({ plugins: [installCoordination, cluster.plugin] })
  let granted!: (key: string) => void
  const grantedKey = new Promise<string>((resolve) => {
    granted = resolve
  })
  const body = async (ctx: TaskContext) => {
    granted((await fencingToken(ctx)).key)
    // Four renewal periods, or until the lease is lost.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, (4 * LEASE) / 3)
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer)
        resolve()
      })
    })
    return 'kept'
  }
  const task = run(runtime, withCoordinator(body, cluster.serialize, { key: 'snap' }))
  const lock = `${prefix}:{${await grantedKey}}:lock`
  const runIdBefore = /run_id:(\w+)/.exec(await admin.info('server'))?.[1]
  const holder = await admin.get(lock)
  expect(holder).not.toBeNull()
  await admin.save()
  await server.stop()
  await server.start()
  // The restarted server loaded the snapshot: the lock is there, under another run_id.
  expect(await admin.get(lock)).toBe(holder)
  expect(/run_id:(\w+)/.exec(await admin.info('server'))?.[1]).not.toBe(runIdBefore)
  const outcome = await settle(task)
  expect(outcome.status).toBe('error')
  const error = (outcome as { error: unknown }).error
  expect(error).toBeInstanceOf(LeaseLostError)
  expect((error as Error).message).toMatch(/another run_id/)
  await shutdown(runtime)
})
