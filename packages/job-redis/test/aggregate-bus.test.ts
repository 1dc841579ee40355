import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { busFacts } from './bus-facts.js'
import { onePrimary } from './bus-support.js'
import { type RedisServer, startRedisServer } from './redis-server.js'

let server: RedisServer

beforeAll(async () => {
  server = await startRedisServer()
})

afterAll(async () => {
  await server.dispose()
})

busFacts('one primary', () => onePrimary(server.url))

describe('after consumer.stop()', () => {
  it('no timer of the package holds the process: a child that stopped its consumer and closed its client exits at once', async () => {
    const script = fileURLToPath(new URL('./children/bus-stops.mjs', import.meta.url))
    const startedAt = performance.now()
    // connectTimeoutMs and leaseMs are 60 s in the child: any timer of theirs left behind would hold it past this limit.
    const { stdout } = await promisify(execFile)('node', [script, server.url], { timeout: 30_000 })
    expect(performance.now() - startedAt).toBeLessThan(30_000)
    expect(stdout).toBe('stopped')
  })
})
