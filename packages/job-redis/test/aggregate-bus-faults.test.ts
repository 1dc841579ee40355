import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisUnavailableError } from '../src/index.js'
import { busSetup, recorder } from './bus-support.js'
import { type RedisServer, startRedisServer } from './redis-server.js'
import { eventually } from './support.js'

let server: RedisServer

beforeAll(async () => {
  server = await startRedisServer()
})

afterAll(async () => {
  await server.dispose()
})

describe('the aggregate bus when Redis restarts', () => {
  it('send fails clearly while Redis is down; consumers recover by themselves with newer fences', async () => {
    // Bounds wide enough that a loaded machine answers every send while Redis
    // is up (a send that times out then may still land later, which the
    // order check below could not tell from a reorder).
    const { bus, close } = busSetup(server.url, {
      partitions: 2,
      leaseMs: 1000,
      connectTimeoutMs: 800,
    })
    const rec = recorder()
    const consumer = bus.consume('sales.Order', rec.handle)
    await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq: 1 } })
    await eventually(() => rec.handled.length === 1, 5000, 'first handled')
    const before = Math.max(...rec.handled.map((h) => h.fence))

    await server.stop()
    await expect(bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq: 2 } })).rejects.toThrow(
      RedisUnavailableError,
    )
    // No renewal for a lease: the consumer let its partitions go.
    await eventually(() => consumer.owned().length === 0, 5000, 'partitions given up')
    await server.start()

    await eventually(() => consumer.owned().length === 2, 10_000, 'partitions taken again')
    await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq: 3 } })
    await bus.send({ aggregate: 'sales.Order', id: 'b', body: { seq: 1 } })
    const has = (id: string, seq: number) => rec.handled.some((h) => h.id === id && h.seq === seq)
    await eventually(
      () => has('a', 3) && has('b', 1),
      10_000,
      'new messages handled after the restart',
    )
    expect(rec.handled.slice(1).every((h) => h.fence > before)).toBe(true)
    // The send that failed may still land (the client's offline queue sends it
    // when Redis is back): unknown, never reordered after a later send of its id.
    const ofA = rec.handled.filter((h) => h.id === 'a').map((h) => h.seq)
    expect([
      [1, 3],
      [1, 2, 3],
    ]).toContainEqual(ofA)
    const stats = await consumer.stats()
    expect(stats.leasesLost).toBeGreaterThanOrEqual(2)
    await consumer.stop()
    close()
  })
})

describe('the aggregate bus when Redis is paused', () => {
  it('CLIENT PAUSE past the lease: handlers are told (LeaseLostError), no new one starts, then it recovers', async () => {
    const { bus, client, close } = busSetup(server.url, {
      partitions: 1,
      leaseMs: 300,
      connectTimeoutMs: 200,
    })
    const admin = client()
    await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq: 1 } })
    await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq: 2 } })
    const entered: number[] = []
    let abortedWith: unknown
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const consumer = bus.consume<{ seq: number }>('sales.Order', async ({ body }, signal) => {
      entered.push(body.seq)
      if (body.seq === 1) {
        signal.addEventListener('abort', () => {
          abortedWith = signal.reason
        })
        await gate
      }
    })
    await eventually(() => entered.length === 1, 5000, 'first handler entered')
    await admin.call('CLIENT', 'PAUSE', '1500', 'ALL')
    // No renewal within the lease: the partition is given up and the handler's signal aborts.
    await eventually(() => abortedWith !== undefined, 5000, 'handler told')
    expect((abortedWith as Error).name).toBe('LeaseLostError')
    release()
    await expect(bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq: 3 } })).rejects.toThrow(
      /did not answer within connectTimeoutMs/,
    )
    expect(entered).toEqual([1])
    // After the pause: the partition is taken again and every message handled, in order.
    await eventually(() => entered.includes(3), 10_000, 'recovered')
    const ofA = entered.filter((seq, k) => entered.indexOf(seq) === k)
    expect(ofA).toEqual([1, 2, 3])
    await consumer.stop()
    close()
  })
})
