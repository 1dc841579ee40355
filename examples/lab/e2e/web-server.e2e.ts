// `pnpm lab:web` as a person runs it from the root, stopped the way a process
// manager stops it: SIGTERM to the pnpm process only. The dev server must go
// with it, not linger on its port. (test:e2e has just built the packages, so
// the command's own build step is a cache hit.)
import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
let child: ChildProcess | undefined

afterAll(() => {
  // Safety net for a failed run: the whole group this test started, nothing else.
  if (child?.pid !== undefined && child.exitCode === null) {
    try {
      process.kill(-child.pid, 'SIGKILL')
    } catch {}
  }
})

/** Resolves with the dev server's URL once it prints it. */
function waitForUrl(process: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = ''
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8')
      const match = /Local:\s+(http:\/\/127\.0\.0\.1:\d+\/)/.exec(output)
      if (match?.[1] !== undefined) resolve(match[1])
    }
    process.stdout?.on('data', onData)
    process.stderr?.on('data', onData)
    process.once('exit', (code) => reject(new Error(`pnpm lab:web exited (${code}):\n${output}`)))
  })
}

function withoutColorFlags(): NodeJS.ProcessEnv {
  const { FORCE_COLOR: _force, ...env } = process.env
  return env
}

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) })
    await response.arrayBuffer()
    return true
  } catch {
    return false
  }
}

describe('pnpm lab:web', () => {
  it('serves the page, and stops its dev server when pnpm gets SIGTERM', async () => {
    child = spawn('pnpm', ['lab:web'], {
      cwd: ROOT,
      detached: true, // its own process group, so the safety net can reach every child
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...withoutColorFlags(), NO_COLOR: '1' }, // plain text, so the URL can be read
    })
    let output = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8')
    })
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8')
    })
    const url = await waitForUrl(child)
    expect(await answers(url)).toBe(true)

    const exited = new Promise((resolve) => child?.once('exit', resolve))
    child.kill('SIGTERM') // the pnpm process only, not its group
    // A stop that was asked for is no failure: exit 0, no pnpm error (it used to print exit 143).
    expect(await exited).toBe(0)
    expect(output).not.toMatch(/ERR_PNPM|ELIFECYCLE|Command failed/)
    await expect.poll(() => answers(url), { timeout: 10_000, interval: 250 }).toBe(false)
  })
})
