import { afterAll, beforeAll, it } from 'vitest'
import { ownershipFact } from './bus-ownership.js'
import { onePrimary } from './bus-support.js'
import { type RedisServer, startRedisServer } from './redis-server.js'

let server: RedisServer
beforeAll(async () => {
  server = await startRedisServer()
})
afterAll(async () => {
  await server.dispose()
})

it('every handler runs under its own consumer’s lease of the id’s partition, while consumers join and leave', async () => {
  await ownershipFact(onePrimary(server.url))
})
