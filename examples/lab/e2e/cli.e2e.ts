// The built CLI (dist/cli.js) as a process, the way `pnpm lab` runs it:
// its public @vega/* entries resolved from node_modules, real time, real stdout.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import type { LabDocument } from '../src/cli.js'

const BIN = fileURLToPath(new URL('../dist/cli.js', import.meta.url))
const run = promisify(execFile)

async function lab(args: string[], env: Record<string, string> = {}) {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`pnpm test:e2e\` from the root.`)
  const { NO_COLOR: _no, FORCE_COLOR: _force, ...inherited } = process.env
  return run(process.execPath, [BIN, ...args], { env: { ...inherited, ...env } })
}

describe('the built CLI', () => {
  it('--json prints one JSON document with every default strategy', async () => {
    const { stdout, stderr } = await lab(['--json'])
    expect(stderr).toBe('')
    const document = JSON.parse(stdout) as LabDocument
    expect(document.runs.map((r) => [r.strategy, r.executions])).toEqual([
      ['none', 4],
      ['dedupe', 1],
      ['restart', 4],
      ['serialize', 4],
      ['exhaust', 1],
      ['keepLatest', 2],
      ['bounded(2)', 2],
      ['forgetful', 0],
    ])
  })

  it('prints tables without colors into a pipe, with colors when FORCE_COLOR is set', async () => {
    const plain = await lab(['--strategy', 'restart'])
    expect(plain.stdout).toContain(
      '  #1    cancelled (abort, by #2)  rejected CancelledError (abort)',
    )
    expect(plain.stdout).not.toContain('\u001b[')
    const colored = await lab(['--strategy', 'restart'], { FORCE_COLOR: '1' })
    expect(colored.stdout).toContain('\u001b[')
  })

  it("writes only the JSON document with the root README's command", async () => {
    const root = fileURLToPath(new URL('../../../', import.meta.url))
    const { stdout } = await run(
      'pnpm',
      ['--silent', 'lab', '--', '--json', '--strategy', 'dedupe', '--duration', '5'],
      { cwd: root },
    )
    const document = JSON.parse(stdout) as LabDocument
    expect(document.runs.map((r) => [r.strategy, r.executions])).toEqual([['dedupe', 1]])
  })

  it('exits 2 with a message on a bad flag', async () => {
    await expect(lab(['--strategy', 'switchMap'])).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining("unknown strategy 'switchMap'"),
    })
  })
})
