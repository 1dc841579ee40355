// The README's bus walkthrough is a real program: written out as orders.mjs
// and run as two workers and a producer against this file's own Postgres.
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually, uniqueSchema } from './bus-support.js'
import { type PostgresServer, startPostgres } from './postgres.js'

const run = promisify(execFile)
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
const programs = [...readme.matchAll(/```mjs\n([\s\S]*?)```/g)].map((match) => match[1] as string)
// Inside the package folder, so '@vega/job-postgres' resolves to this package (self-reference).
const dir = new URL('./.readme-examples/', import.meta.url)

let server: PostgresServer
beforeAll(async () => {
  server = await startPostgres()
})
afterAll(async () => {
  rmSync(fileURLToPath(dir), { recursive: true, force: true })
  await server?.dispose()
})

describe('README bus walkthrough', () => {
  it('is the one mjs program of the README', () => {
    expect(programs).toHaveLength(1)
  })

  it('two workers and a producer: every order handled once, steps 1 to 5 in order', async () => {
    mkdirSync(dir, { recursive: true })
    const file = fileURLToPath(new URL('orders.mjs', dir))
    writeFileSync(file, programs[0] as string)
    const env = { ...process.env, POSTGRES_URL: server.url, SCHEMA: uniqueSchema() }
    const outputs = ['', '']
    const errors = ['', '']
    const workers: ChildProcess[] = [0, 1].map((k) => {
      const child = spawn('node', [file, 'consume'], { env })
      child.stdout?.on('data', (chunk: Buffer) => {
        outputs[k] += chunk.toString()
      })
      child.stderr?.on('data', (chunk: Buffer) => {
        errors[k] += chunk.toString()
      })
      return child
    })
    await eventually(
      () => errors.every((text) => text.includes('consuming sales.Order')),
      30_000,
      'both workers consuming',
    )
    await run('node', [file, 'send'], { env, timeout: 30_000 })
    const lines = () => outputs.join('').trim().split('\n').filter(Boolean)
    await eventually(() => lines().length >= 15, 30_000, '15 handled')
    const exits = workers.map((child) => new Promise((resolve) => child.once('exit', resolve)))
    for (const child of workers) child.kill('SIGTERM')
    expect(await Promise.all(exits)).toEqual([0, 0])
    expect(lines()).toHaveLength(15)
    for (const id of ['order-1', 'order-2', 'order-3']) {
      const steps = lines()
        .filter((line) => line.includes(`${id} step`))
        .map((line) => Number(/step (\d)/.exec(line)?.[1]))
      expect(steps).toEqual([1, 2, 3, 4, 5])
    }
    expect(errors.join('')).toMatch(/stopped after \d+ messages, released \d+ partitions/)
  }, 90_000)
})
