// The README's long-running commands, run from the root as a person runs
// them, stopped the three ways they get stopped: Ctrl-C in a terminal (SIGINT
// to the whole foreground process group), SIGINT to pnpm alone, and SIGTERM
// to pnpm alone (a process manager, `kill`). Each stop must exit 0 with no
// pnpm error text, free the port the command served on, and leave no process
// of its group behind (`node dist/bin.js` used to stay on its port). The
// Redis lab is stopped mid-run: its two worker processes and its own
// redis-server must go too.
// (`pnpm test:e2e` has just built the packages, so each command's own build
// step is a cache hit.)
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { after, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const HTTP = /(http:\/\/127\.0\.0\.1:(\d+)\/)/
// The lab's banner names its redis-server once both workers are ready.
const REDIS = /on one Redis \((redis:\/\/127\.0\.0\.1:(\d+))\)/

/** The commands: how to run each, and the address it prints once it serves. */
const COMMANDS = [
  // Port 0: a free port of the system's choosing, not someone's running 4318.
  { script: 'devtools', args: [], env: { VEGA_DEVTOOLS_PORT: '0' }, serves: HTTP },
  { script: 'example:react', args: [], env: {}, serves: HTTP },
  { script: 'lab:web', args: [], env: {}, serves: HTTP },
  // Bodies of 5 s: the signal lands while the calls run.
  { script: 'lab:redis', args: ['--', '--duration', '5000'], env: {}, serves: REDIS },
]
const STOPS = [
  { name: 'Ctrl-C (SIGINT to the process group)', signal: 'SIGINT', group: true },
  { name: 'SIGINT to pnpm', signal: 'SIGINT', group: false },
  { name: 'SIGTERM to pnpm', signal: 'SIGTERM', group: false },
]

const started = new Set()
after(() => {
  // Safety net for a failed run: the groups this test started, nothing else.
  for (const pid of started) {
    try {
      process.kill(-pid, 'SIGKILL')
    } catch {}
  }
})

function environment(extra) {
  const { FORCE_COLOR: _force, ...env } = process.env
  return { ...env, NO_COLOR: '1', ...extra } // plain text, so the URL can be read
}

/** Whether any process of the group `pid` leads is still alive. */
function groupAlive(pid) {
  try {
    process.kill(-pid, 0)
    return true
  } catch {
    return false
  }
}

/** Whether a server can listen on the port now. */
function portFree(port) {
  return new Promise((resolve) => {
    const probe = createServer()
    probe.once('error', () => resolve(false))
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
  })
}

async function eventually(check, what, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`still not true after ${timeoutMs} ms: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

for (const command of COMMANDS) {
  describe(`pnpm ${command.script}`, () => {
    for (const stop of STOPS) {
      it(`stops cleanly on ${stop.name}: exit 0, no pnpm error, port free, nothing left`, async () => {
        const child = spawn('pnpm', [command.script, ...command.args], {
          cwd: ROOT,
          detached: true, // its own process group, as a terminal gives a command
          stdio: ['ignore', 'pipe', 'pipe'],
          env: environment(command.env),
        })
        started.add(child.pid)
        let output = ''
        const exited = new Promise((resolve) => {
          child.once('exit', (code, signal) => resolve({ code, signal }))
        })
        const served = new Promise((resolve, reject) => {
          const onData = (chunk) => {
            output += chunk.toString('utf8')
            const match = command.serves.exec(output)
            if (match !== null) resolve({ url: match[1], port: Number(match[2]) })
          }
          child.stdout.on('data', onData)
          child.stderr.on('data', onData)
          void exited.then(() => reject(new Error(`exited before serving:\n${output}`)))
        })
        const { url, port } = await served
        if (url.startsWith('http:')) {
          const response = await fetch(url, { signal: AbortSignal.timeout(10_000) })
          await response.arrayBuffer()
          assert.equal(response.status, 200)
        }

        if (stop.group) process.kill(-child.pid, stop.signal)
        else child.kill(stop.signal)

        assert.deepEqual(await exited, { code: 0, signal: null }, output)
        assert.doesNotMatch(output, /ERR_PNPM|ELIFECYCLE|Command failed/)
        await eventually(() => !groupAlive(child.pid), `no process of pnpm ${command.script} left`)
        await eventually(() => portFree(port), `port ${port} free again`)
        started.delete(child.pid)
      })
    }
  })
}
