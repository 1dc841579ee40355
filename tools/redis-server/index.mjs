// The one place the repository starts a redis-server of its own (job-redis's
// tests, the bench's redis scenarios, the redis examples): Debian's
// `redis-server` on a free loopback port, persistence off, in a temporary
// folder, never a mock.

import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

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

/** Starts a redis-server and resolves once it accepts connections. */
export async function startRedisServer(options = {}) {
  const { who, alternative, folderPrefix = 'vega-redis-', unref = false } = options
  requireRedisServer(who, alternative)
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), folderPrefix))
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
  let child

  const start = () =>
    new Promise((resolve, reject) => {
      const proc = spawn('redis-server', [...args, '--dir', dir], {
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      child = proc
      if (unref) proc.unref()
      let output = ''
      const onData = (chunk) => {
        output += chunk
        if (!output.includes('Ready to accept connections')) return
        proc.stdout.off('data', onData)
        // Keep draining its output, without keeping this process alive for it.
        proc.stdout.resume()
        if (unref) proc.stdout.unref?.()
        resolve()
      }
      proc.stdout.on('data', onData)
      proc.stderr.resume()
      if (unref) proc.stderr.unref?.()
      proc.once('exit', (code) =>
        reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`)),
      )
      proc.once('error', reject)
    })

  const stop = () =>
    new Promise((resolve) => {
      const proc = child
      child = undefined
      if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) {
        resolve()
        return
      }
      proc.once('exit', () => resolve())
      proc.kill('SIGTERM')
    })

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
