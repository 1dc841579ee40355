import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { busSetup, recorder, sendAll, until } from './bus-support.js'
import { type RedisServer, startRedisServer } from './redis-server.js'

let server: RedisServer

beforeAll(async () => {
  server = await startRedisServer()
})

afterAll(async () => {
  await server.dispose()
})

describe('createRedisAggregateBus, one consumer', () => {
  it('hands every message of an id to the handler once, in send order, one at a time', async () => {
    const { bus, close } = busSetup(server.url)
    const ids = Array.from({ length: 40 }, (_, i) => `order-${i}`)
    await sendAll(bus, 'sales.Order', ids, 25)
    const rec = recorder()
    const consumer = bus.consume('sales.Order', rec.handle, { parallelism: 8 })
    await until(() => rec.handled.length === 1000, 20_000, 'all handled')
    const report = await consumer.stop()
    expect(rec.overlaps).toEqual([])
    for (const id of ids) {
      expect(rec.handled.filter((h) => h.id === id).map((h) => h.seq)).toEqual(
        Array.from({ length: 25 }, (_, i) => i + 1),
      )
    }
    expect(new Set(rec.handled.map((h) => h.attempt))).toEqual(new Set([1]))
    expect(report).toMatchObject({ mode: 'drain', handled: 1000, released: 8, abandoned: 0 })
    close()
  })
})
