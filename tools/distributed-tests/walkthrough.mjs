// The README's bus walkthrough of every engine is a real program: written
// out as orders.mjs (inside the package folder, so the package's name
// resolves to the package itself) and run as two workers and a producer
// against the engine's own test server.

import { execFile, spawn } from 'node:child_process'
import { mkdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { eventually } from './bus.mjs'

const run = promisify(execFile)

/** Registers the walkthrough's tests (see walkthrough.d.ts). */
export function describeBusWalkthrough({ readme, dir, env }) {
  const text = readFileSync(readme, 'utf8')
  const programs = [...text.matchAll(/```mjs\n([\s\S]*?)```/g)].map((match) => match[1])
  const file = fileURLToPath(new URL('orders.mjs', dir))

  afterAll(() => {
    rmSync(file, { force: true })
    try {
      // Another walkthrough of the package may still use the folder.
      rmdirSync(dir)
    } catch {}
  })

  describe('README bus walkthrough', () => {
    it('is the one mjs program of the README', () => {
      expect(programs).toHaveLength(1)
    })

    it('two workers and a producer: every order handled once, steps 1 to 5 in order', async () => {
      mkdirSync(dir, { recursive: true })
      writeFileSync(file, programs[0])
      const vars = { ...process.env, ...env() }
      const outputs = ['', '']
      const errors = ['', '']
      const workers = [0, 1].map((k) => {
        const child = spawn('node', [file, 'consume'], { env: vars })
        child.stdout.on('data', (chunk) => {
          outputs[k] += chunk.toString()
        })
        child.stderr.on('data', (chunk) => {
          errors[k] += chunk.toString()
        })
        return child
      })
      // A worker that is still loading its modules dies of a SIGTERM instead of
      // draining: send (and later stop) only once both say they consume.
      await eventually(
        () => errors.every((text) => text.includes('consuming sales.Order')),
        30_000,
        'both workers consuming',
      )
      await run('node', [file, 'send'], { env: vars, timeout: 30_000 })
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
}
