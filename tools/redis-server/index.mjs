// The one place the repository starts a redis-server of its own (job-redis's
// tests, the bench's redis scenarios, the redis examples): Debian's
// `redis-server` on a free loopback port, persistence off, in a temporary
// folder, never a mock.

import { execFile, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const INSTALL = 'apt-get install -y redis-server'

/** Throws, with the one command to run, when no redis-server is on PATH. */
export function requireRedisServer(who = 'this command', alternative = '') {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' })
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      `${who} needs a real redis-server (Redis ≥ 7.0) and none was found on PATH. Install Debian's package: \`${INSTALL}\`${alternative === '' ? '' : ` ${alternative}`}.`,
    )
  }
}

/** A loopback port nobody listens on right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(address.port))
    })
  })
}

/**
 * Spawns a redis-server with `args`; `ready` resolves once it accepts
 * connections and rejects if it exits first. With `unref`, neither it nor
 * its output keeps this process alive.
 */
function spawnServer(args, { unref, what }) {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] })
  if (unref) child.unref()
  const ready = new Promise((resolve, reject) => {
    let output = ''
    const onData = (chunk) => {
      output += chunk
      if (!output.includes('Ready to accept connections')) return
      child.stdout.off('data', onData)
      // Keep draining its output, without keeping this process alive for it.
      child.stdout.resume()
      if (unref) child.stdout.unref?.()
      resolve()
    }
    child.stdout.on('data', onData)
    child.stderr.resume()
    if (unref) child.stderr.unref?.()
    child.once('exit', (code) =>
      reject(new Error(`${what} exited (${code}) before it was ready:\n${output}`)),
    )
    child.once('error', reject)
  })
  return { child, ready }
}

/** SIGTERM, resolved at its exit (at once for one that already exited). */
function stopChild(child) {
  return new Promise((resolve) => {
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) {
      resolve()
      return
    }
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })
}

/** Starts a redis-server and resolves once it accepts connections. */
export async function startRedisServer(options = {}) {
  const { who, alternative, folderPrefix = 'vega-redis-', unref = false } = options
  requireRedisServer(who, alternative)
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), folderPrefix))
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
  let child

  const start = () => {
    const spawned = spawnServer([...args, '--dir', dir], { unref, what: 'redis-server' })
    child = spawned.child
    return spawned.ready
  }

  const stop = () => {
    const proc = child
    child = undefined
    return stopChild(proc)
  }

  await start()
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    stop,
    start,
    async dispose() {
      await stop()
      rmSync(dir, { recursive: true, force: true })
    },
    killNow() {
      child?.kill('SIGKILL')
      child = undefined
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

// A Redis Cluster: three `redis-server --cluster-enabled yes` primaries (six
// with a replica each), joined by `redis-cli --cluster create` (Debian's
// redis-tools, which redis-server depends on).

const run = promisify(execFile)

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
      taken.add(port + 10_000)
      return port
    }
  }
}

async function clusterOk(port) {
  try {
    const { stdout } = await run('redis-cli', ['-p', String(port), 'cluster', 'info'])
    return stdout.includes('cluster_state:ok')
  } catch {
    return false
  }
}

export async function startRedisCluster(options = {}) {
  const { replicas = 0, who = 'the Redis Cluster tests', unref = false } = options
  requireRedisServer(who)
  const probe = await run('redis-cli', ['--version']).catch(() => undefined)
  if (probe === undefined) {
    throw new Error(
      `${who} need redis-cli (Debian: \`apt-get install -y redis-tools\`, which redis-server depends on).`,
    )
  }
  const dir = mkdtempSync(join(tmpdir(), 'vega-redis-cluster-'))
  const taken = new Set()
  const ports = []
  for (let i = 0; i < 3 * (1 + replicas); i++) ports.push(await freeClusterPort(taken))
  const children = new Map()

  const start = (port) => {
    const args = [
      ...['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes'],
      ...['--cluster-config-file', join(dir, `nodes-${port}.conf`)],
      ...['--cluster-node-timeout', '2000', '--save', '', '--appendonly', 'no', '--dir', dir],
    ]
    const spawned = spawnServer(args, { unref, what: `redis-server (cluster node ${port})` })
    children.set(port, spawned.child)
    return spawned.ready
  }

  const stop = (port) => {
    const child = children.get(port)
    children.delete(port)
    return stopChild(child)
  }

  const healthy = async () => {
    const deadline = Date.now() + 30_000
    for (;;) {
      const running = ports.filter((port) => children.has(port))
      const states = await Promise.all(running.map(clusterOk))
      if (states.every(Boolean)) return
      if (Date.now() > deadline) throw new Error('the cluster did not reach cluster_state:ok')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  await Promise.all(ports.map(start))
  await run('redis-cli', [
    '--cluster',
    'create',
    ...ports.map((port) => `127.0.0.1:${port}`),
    ...['--cluster-replicas', String(replicas), '--cluster-yes'],
  ])
  await healthy()
  return {
    ports,
    nodes: ports.slice(0, 3).map((port) => ({ host: '127.0.0.1', port })),
    dir,
    stop,
    start,
    healthy,
    async dispose() {
      await Promise.all(ports.map(stop))
      rmSync(dir, { recursive: true, force: true })
    },
    killNow() {
      for (const child of children.values()) child.kill('SIGKILL')
      children.clear()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
