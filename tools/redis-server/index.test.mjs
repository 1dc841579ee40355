import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { createConnection } from 'node:net'
import { test } from 'node:test'
import { startRedisServer } from './index.mjs'

/** One PING over a raw socket: the answer the server gives, or the socket's error. */
function ping(port) {
  return new Promise((resolve, reject) => {
    const socket = createConnection(port, '127.0.0.1')
    socket.once('error', reject)
    socket.once('data', (data) => {
      socket.destroy()
      resolve(String(data))
    })
    socket.write('PING\r\n')
  })
}

test('a started server answers, stops, starts again on its port, and leaves nothing after dispose', async () => {
  const server = await startRedisServer({ folderPrefix: 'vega-redis-server-test-' })
  assert.equal(server.url, `redis://127.0.0.1:${server.port}`)
  assert.equal(await ping(server.port), '+PONG\r\n')
  await server.stop()
  await assert.rejects(ping(server.port), { code: 'ECONNREFUSED' })
  await server.start()
  assert.equal(await ping(server.port), '+PONG\r\n')
  await server.dispose()
  assert.equal(existsSync(server.dir), false)
  await assert.rejects(ping(server.port), { code: 'ECONNREFUSED' })
})

test('killNow stops it synchronously and removes its folder', async () => {
  const server = await startRedisServer({ folderPrefix: 'vega-redis-server-test-' })
  assert.equal(existsSync(server.dir), true)
  server.killNow()
  assert.equal(existsSync(server.dir), false)
  // SIGKILL is delivered at once; the port frees within a moment.
  let refused = false
  for (let i = 0; i < 50 && !refused; i++) {
    try {
      await ping(server.port)
      await new Promise((r) => setTimeout(r, 20))
    } catch (error) {
      refused = error.code === 'ECONNREFUSED'
    }
  }
  assert.equal(refused, true)
})
