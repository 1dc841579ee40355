// The redis-bus scenario's Redis Cluster: 3 primaries (`redis-server
// --cluster-enabled yes` on loopback ports, joined by `redis-cli --cluster
// create … --cluster-replicas 0`), persistence off, killed when the bench
// process exits. Started once, when a cluster row first runs.

import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { requireRedisServer } from '@vega/redis-server'

const run = promisify(execFile)
let shared

/** Starts (once per bench process) a 3-primary cluster; resolves with its nodes ({ host, port }). */
export function clusterNodes() {
  shared ??= start()
  return shared
}

function listenable(port) {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/** A free port whose cluster bus port (port + 10000) is free too. */
async function freeClusterPort(taken) {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 20_000)
    if (taken.has(port) || taken.has(port + 10_000)) continue
    if ((await listenable(port)) && (await listenable(port + 10_000))) {
      taken.add(port)
      return port
    }
  }
}

function startNode(dir, port) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'redis-server',
      [
        ...['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes'],
        ...['--cluster-config-file', join(dir, `nodes-${port}.conf`), '--dir', dir],
        ...['--save', '', '--appendonly', 'no'],
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    )
    child.unref()
    let output = ''
    const onData = (chunk) => {
      output += chunk
      if (!output.includes('Ready to accept connections')) return
      child.stdout.off('data', onData)
      child.stdout.resume()
      child.stdout.unref?.()
      resolve(child)
    }
    child.stdout.on('data', onData)
    child.once('exit', (code) => reject(new Error(`cluster node ${port} exited (${code})`)))
    child.once('error', reject)
  })
}

async function start() {
  requireRedisServer('the redis-bus scenario’s cluster rows')
  const dir = mkdtempSync(join(tmpdir(), 'vega-bench-cluster-'))
  const taken = new Set()
  const ports = []
  for (let i = 0; i < 3; i++) ports.push(await freeClusterPort(taken))
  const children = await Promise.all(ports.map((port) => startNode(dir, port)))
  process.on('exit', () => {
    for (const child of children) child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  })
  const hosts = ports.map((port) => `127.0.0.1:${port}`)
  await run('redis-cli', [
    '--cluster',
    'create',
    ...hosts,
    '--cluster-replicas',
    '0',
    '--cluster-yes',
  ])
  for (const port of ports) {
    for (;;) {
      const { stdout } = await run('redis-cli', ['-p', String(port), 'cluster', 'info'])
      if (stdout.includes('cluster_state:ok')) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  return ports.map((port) => ({ host: '127.0.0.1', port }))
}
