// The README's bus walkthrough is a real program (see
// @vega/distributed-tests/walkthrough), run against this file's own redis-server.
import { describeBusWalkthrough } from '@vega/distributed-tests/walkthrough'
import { afterAll, beforeAll } from 'vitest'
import { type RedisServer, startRedisServer } from './redis-server.js'
import { uniquePrefix } from './support.js'

let server: RedisServer
beforeAll(async () => {
  server = await startRedisServer()
})
afterAll(async () => {
  await server?.dispose()
})

describeBusWalkthrough({
  readme: new URL('../README.md', import.meta.url),
  dir: new URL('./.readme-examples/', import.meta.url),
  env: () => ({ REDIS_URL: server.url, PREFIX: uniquePrefix() }),
})
