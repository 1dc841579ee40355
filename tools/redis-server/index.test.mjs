import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createConnection } from 'node:net'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { startRedisCluster, startRedisServer } from './index.mjs'

const run = promisify(execFile)

/** A redis-cli command's output. */
async function cli(port, ...args) {
  const { stdout } = await run('redis-cli', ['-p', String(port), ...args])
  return stdout
}

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

test('a started cluster has three primaries that own every slot, survives a node restart, and leaves nothing after dispose', async () => {
  const cluster = await startRedisCluster({ who: 'the redis-server tool test' })
  try {
    assert.equal(cluster.ports.length, 3)
    assert.deepEqual(
      cluster.nodes,
      cluster.ports.map((port) => ({ host: '127.0.0.1', port })),
    )
    const info = await cli(cluster.ports[0], 'cluster', 'info')
    assert.match(info, /cluster_state:ok/)
    assert.match(info, /cluster_slots_assigned:16384/)
    assert.match(info, /cluster_known_nodes:3/)
    await cluster.stop(cluster.ports[2])
    await assert.rejects(ping(cluster.ports[2]), { code: 'ECONNREFUSED' })
    await cluster.start(cluster.ports[2])
    await cluster.healthy()
    assert.equal(await ping(cluster.ports[2]), '+PONG\r\n')
  } finally {
    await cluster.dispose()
  }
  assert.equal(existsSync(cluster.dir), false)
  for (const port of cluster.ports) await assert.rejects(ping(port), { code: 'ECONNREFUSED' })
})
