// The redis scenarios' own redis-server: a free loopback port, persistence
// off, a temporary folder; killed when the bench process exits.

import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

let shared

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/** Starts (once per bench process) a redis-server and resolves with its URL. */
export function redisUrl() {
  shared ??= start()
  return shared
}

async function start() {
  const probe = spawnSync('redis-server', ['--version'])
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      'the redis scenarios need redis-server (Redis ≥ 7.0) on PATH: apt-get install -y redis-server',
    )
  }
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'vega-bench-redis-'))
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  child.unref()
  process.on('exit', () => {
    child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  })
  await new Promise((resolve, reject) => {
    let output = ''
    child.stdout.on('data', (chunk) => {
      output += chunk
      if (output.includes('Ready to accept connections')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}):\n${output}`)))
  })
  child.stdout.resume()
  child.stdout.unref?.()
  return `redis://127.0.0.1:${port}`
}

/** The lower bound: a hand-written lease, acquire with SET NX PX and release with a compare-and-delete script. */
export const HAND_RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`
