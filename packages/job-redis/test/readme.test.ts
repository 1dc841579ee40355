// The README's walkthrough is a real program: written out as save.mjs and run
// as two processes at once against this file's own redis-server.
import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RedisServer, startRedisServer } from './redis-server.js'
import { uniquePrefix } from './support.js'

const run = promisify(execFile)
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
const programs = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((match) => match[1]!)
// Inside the package folder, so '@vega/job-redis' resolves to this package (self-reference).
const dir = new URL('./.readme-examples/', import.meta.url)

let server: RedisServer
beforeAll(async () => {
  server = await startRedisServer()
})
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  await server?.dispose()
})

describe('README walkthrough', () => {
  it('is the one js program of the README', () => {
    expect(programs).toHaveLength(1)
  })

  it('two processes save the same document: six accepted writes, six different fences', async () => {
    mkdirSync(dir, { recursive: true })
    const file = fileURLToPath(new URL('save.mjs', dir))
    writeFileSync(file, programs[0]!)
    const env = { ...process.env, REDIS_URL: server.url, PREFIX: uniquePrefix() }
    const [a, b] = await Promise.all([
      run('node', [file, 'A'], { env, timeout: 30_000 }),
      run('node', [file, 'B'], { env, timeout: 30_000 }),
    ])
    const lines = `${a.stdout}${b.stdout}`.trim().split('\n')
    expect(lines).toHaveLength(6)
    expect(lines.every((line) => line.endsWith(': accepted'))).toBe(true)
    const fences = lines.map((line) => Number(/fence (\d+)/.exec(line)?.[1]))
    expect(new Set(fences).size).toBe(6)
  })
})
