// A real Redis Cluster of 3 primaries on loopback ports, started by the test
// and stopped after it: three `redis-server --cluster-enabled yes` (six with
// a replica each), joined by `redis-cli --cluster create … --cluster-replicas
// 0` (or 1) (Debian's redis-tools, which redis-server depends on).
// Persistence off, like every test server.

import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

export interface RedisClusterNodes {
  /** Every node's port (primaries first, as `redis-cli --cluster create` assigns them). */
  readonly ports: readonly number[]
  /** Stops one primary (SIGTERM) and waits for its exit. */
  stop(port: number): Promise<void>
  /** Starts a stopped primary again on its port, with its node config: it rejoins empty. */
  start(port: number): Promise<void>
  /** Resolves once every running node reports cluster_state:ok. */
  healthy(): Promise<void>
  dispose(): Promise<void>
}

function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/** A free port whose cluster bus port (port + 10000) is free too. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
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

async function clusterOk(port: number): Promise<boolean> {
  try {
    const { stdout } = await run('redis-cli', ['-p', String(port), 'cluster', 'info'])
    return stdout.includes('cluster_state:ok')
  } catch {
    return false
  }
}

export async function startRedisCluster(
  options: { replicas?: 0 | 1 } = {},
): Promise<RedisClusterNodes> {
  const replicas = options.replicas ?? 0
  const dir = mkdtempSync(join(tmpdir(), 'vega-job-redis-cluster-'))
  const taken = new Set<number>()
  const ports: number[] = []
  for (let i = 0; i < 3 * (1 + replicas); i++) ports.push(await freeClusterPort(taken))
  const children = new Map<number, ChildProcess>()

  const start = (port: number) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--cluster-node-timeout',
          '2000',
          '--save',
          '',
          '--appendonly',
          'no',
          '--dir',
          dir,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      )
      children.set(port, child)
      let output = ''
      const onData = (chunk: Buffer) => {
        output += chunk
        if (!output.includes('Ready to accept connections')) return
        child.stdout?.off('data', onData)
        child.stdout?.resume()
        resolve()
      }
      child.stdout?.on('data', onData)
      child.stderr?.resume()
      child.once('exit', (code) =>
        reject(new Error(`redis-server (cluster node ${port}) exited (${code}):\n${output}`)),
      )
      child.once('error', reject)
    })

  const stop = (port: number) =>
    new Promise<void>((resolve) => {
      const child = children.get(port)
      children.delete(port)
      if (child === undefined || child.exitCode !== null || child.signalCode !== null) {
        resolve()
        return
      }
      child.once('exit', () => resolve())
      child.kill('SIGTERM')
    })

  const healthy = async () => {
    const deadline = Date.now() + 30_000
    for (;;) {
      const running = ports.filter((port) => children.has(port))
      const states = await Promise.all(running.map(clusterOk))
      if (states.every(Boolean)) return
      if (Date.now() > deadline) throw new Error('the test cluster did not reach cluster_state:ok')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  await Promise.all(ports.map(start))
  const probe = await run('redis-cli', ['--version']).catch(() => undefined)
  if (probe === undefined) {
    throw new Error(
      'The Redis Cluster tests need redis-cli (Debian: `apt-get install -y redis-tools`, which redis-server depends on).',
    )
  }
  await run('redis-cli', [
    '--cluster',
    'create',
    ...ports.map((port) => `127.0.0.1:${port}`),
    '--cluster-replicas',
    String(replicas),
    '--cluster-yes',
  ])
  await healthy()
  return {
    ports,
    stop,
    start,
    healthy,
    async dispose() {
      await Promise.all(ports.map(stop))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
