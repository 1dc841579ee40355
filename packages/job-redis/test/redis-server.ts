import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A real redis-server owned by one test file: its own port, its own folder, no persistence. */
export interface RedisServer {
  readonly port: number
  readonly url: string
  /** Stops it (SIGTERM) and waits for the exit. */
  stop(): Promise<void>
  /** Starts it again on the same port, empty (a new run_id). */
  start(): Promise<void>
  /** Stops it and removes its folder. */
  dispose(): Promise<void>
}

const INSTALL = 'apt-get install -y redis-server'

function requireRedisServer(): void {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' })
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      `@vega/job-redis tests need a real redis-server (Redis ≥ 7.0) and none was found on PATH. Install Debian's package: \`${INSTALL}\` (.ci/run does it for you), then run the tests again.`,
    )
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

export async function startRedisServer(): Promise<RedisServer> {
  requireRedisServer()
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'vega-job-redis-'))
  let child: ChildProcess | undefined

  const start = () =>
    new Promise<void>((resolve, reject) => {
      const args = [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
      ]
      const proc = spawn('redis-server', [...args, '--dir', dir], {
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      child = proc
      let output = ''
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes('Ready to accept connections')) {
          proc.stdout?.off('data', onData)
          proc.stdout?.resume()
          resolve()
        }
      }
      proc.stdout?.on('data', onData)
      proc.stderr?.resume()
      proc.once('exit', (code) =>
        reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`)),
      )
      proc.once('error', reject)
    })

  const stop = () =>
    new Promise<void>((resolve) => {
      const proc = child
      child = undefined
      if (proc === undefined || proc.exitCode !== null) return resolve()
      proc.once('exit', () => resolve())
      proc.kill('SIGTERM')
    })

  await start()
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop,
    start,
    async dispose() {
      await stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
