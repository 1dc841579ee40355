import { type ChildProcess, fork } from 'node:child_process'
import { readdirSync, rmdirSync, rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type RedisServer, startRedisServer } from '@vega/redis-server'
import { build } from 'esbuild'
import { Redis } from 'ioredis'
import { afterAll, beforeAll } from 'vitest'

const SOURCE = fileURLToPath(new URL('../src/index.ts', import.meta.url))

/** What a test file with forked children gets from {@link useRedisAndChildren}. */
export interface RedisAndChildren {
  /** The file's redis-server (set before its first test). */
  readonly server: RedisServer
  /** A client of it, for this process. */
  readonly redis: Redis
  /** Forks `file` with this package's fresh bundle in `JOB_OTEL_BUNDLE`; killed after the file's tests. */
  fork(file: string): ChildProcess
}

/**
 * Two real processes on a real redis-server: before the file's tests, starts
 * the server and bundles this package from `src` for the children (they run
 * plain Node, and must not load a stale `dist`); after them, kills the
 * children and removes server and bundle. `bundleDir` is the file's own
 * folder, so files running side by side never share one.
 */
export function useRedisAndChildren(who: string, bundleDir: URL): RedisAndChildren {
  const folder = fileURLToPath(bundleDir)
  const bundle = `${folder}job-otel.mjs`
  const children: ChildProcess[] = []
  let server: RedisServer | undefined
  let redis: Redis | undefined

  beforeAll(async () => {
    await build({
      entryPoints: [SOURCE],
      bundle: true,
      format: 'esm',
      platform: 'node',
      packages: 'external',
      define: { __PACKAGE_VERSION__: JSON.stringify('0.0.0-test') },
      outfile: bundle,
      logLevel: 'silent',
    })
    server = await startRedisServer({ who })
    redis = new Redis(server.url)
  })

  afterAll(async () => {
    for (const child of children) child.kill()
    redis?.disconnect()
    await server?.dispose()
    rmSync(folder, { recursive: true, force: true })
    // The shared parent goes with its last bundle (another file's may still be in it).
    const parent = dirname(folder)
    if (readdirSync(parent).length === 0) rmdirSync(parent)
  })

  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useRedisAndChildren: used before its beforeAll ran')
    return value
  }
  return {
    get server() {
      return started(server)
    },
    get redis() {
      return started(redis)
    },
    fork(file) {
      const child = fork(file, [], {
        stdio: 'inherit',
        env: { ...process.env, JOB_OTEL_BUNDLE: bundle },
      })
      children.push(child)
      return child
    },
  }
}
