// Profiles one peer of one scenario: `node src/profile.mjs <scenario> <peer prefix> [n]`
// (or `pnpm --filter @vega/bench profile dedupe job-coordination 50000`).
// Runs the peer 3 times under `node --cpu-prof` in a child process, verifying
// each result, then prints the functions with the most self time.

import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'

const FILES = {
  tasks: './01-tasks.mjs',
  'tasks-immediate': './02-tasks-immediate.mjs',
  dedupe: './03-dedupe.mjs',
  aggregate: './04-aggregate.mjs',
  debounce: './05-debounce.mjs',
  events: './06-events.mjs',
  'async-context': './09-async-context.mjs',
  priorities: './07-priorities.mjs',
  serialize: './11-serialize.mjs',
}

async function child([id, prefix, nArg]) {
  const scenario = (await import(FILES[id])).default
  const peer = scenario.peers.find((p) => p.name.startsWith(prefix))
  if (peer === undefined) throw new Error(`no peer starting with "${prefix}" in ${id}`)
  const n = Number(nArg ?? scenario.size.full)
  for (let round = 0; round < 3; round++) {
    const started = performance.now()
    const result = await peer.run(n)
    const ms = performance.now() - started
    scenario.verify(peer.name, result, n)
    console.log(`${peer.name}, n = ${n}: ${ms.toFixed(1)} ms`)
  }
}

function top(dir, count = 25) {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'))
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const self = new Map()
  let total = 0
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0
    const { functionName, url, lineNumber } = nodes.get(id).callFrame
    const where = url.split('/').slice(-3).join('/')
    const key = `${functionName || '(anonymous)'}  ${where}${where ? `:${lineNumber + 1}` : ''}`
    self.set(key, (self.get(key) ?? 0) + dt)
    total += dt
  })
  console.log('\nself time   share  function')
  for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, count)) {
    console.log(
      `${(us / 1000).toFixed(0).padStart(6)} ms  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}`,
    )
  }
}

const args = process.argv.slice(2)
if (args[0] === '--child') {
  await child(args.slice(1))
} else if (args.length < 2 || !(args[0] in FILES)) {
  console.error(
    `usage: node src/profile.mjs <${Object.keys(FILES).join('|')}> <peer name prefix> [n]`,
  )
  process.exitCode = 1
} else {
  const dir = mkdtempSync(join(tmpdir(), 'vega-bench-prof-'))
  const run = spawnSync(
    process.execPath,
    ['--cpu-prof', `--cpu-prof-dir=${dir}`, fileURLToPath(import.meta.url), '--child', ...args],
    { stdio: 'inherit' },
  )
  if (run.status === 0) top(dir)
  rmSync(dir, { recursive: true, force: true })
  process.exitCode = run.status ?? 1
}
