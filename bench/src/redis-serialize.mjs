// Redis scenario 2: contended serialize across 4 processes — each forks with
// its own runtime and issues its calls on one key at once; bodies never
// overlap (checked from their intervals). Peer: the same hand SET NX PX lease
// as the lower bound of redis-overhead, with a 1 ms retry loop.

import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { check } from './harness.mjs'
import { redisUrl } from './redis-server.mjs'

// The server starts when the scenario loads, so no timed run pays for it.
await redisUrl()

const PROCESSES = 4
const WORK_MS = 1
const CHILD = fileURLToPath(new URL('./redis-child.mjs', import.meta.url))
let rounds = 0

/** Forks the processes, waits until all are connected, then starts them together; times only the calls. */
async function contended(peer, n) {
  const url = await redisUrl()
  const prefix = `bench-contended-${++rounds}`
  const calls = Math.ceil(n / PROCESSES)
  const children = Array.from({ length: PROCESSES }, () => fork(CHILD, [], { stdio: 'inherit' }))
  const message = (child, type) =>
    new Promise((resolve, reject) => {
      child.on('message', (m) => m.t === type && resolve(m))
      child.once(
        'exit',
        (code) => code !== 0 && reject(new Error(`a ${peer} worker exited with ${code}`)),
      )
    })
  for (const child of children) child.send({ url, prefix, peer, calls, workMs: WORK_MS })
  await Promise.all(children.map((child) => message(child, 'ready')))
  const started = performance.now()
  const done = children.map((child) => message(child, 'done'))
  for (const child of children) child.send({ t: 'go' })
  const reports = await Promise.all(done)
  const elapsed = performance.now() - started
  const bodies = reports.flatMap((r) => r.bodies).sort((a, b) => a[0] - b[0])
  let overlaps = 0
  for (let i = 1; i < bodies.length; i++) if (bodies[i][0] < bodies[i - 1][1]) overlaps++
  return {
    calls: calls * PROCESSES,
    bodies: bodies.length,
    overlaps,
    perSecond: (bodies.length / elapsed) * 1000,
  }
}

export default {
  id: 'redis-serialize',
  title: `serialize on one key across ${PROCESSES} processes (bodies of ${WORK_MS} ms), calls issued at once, timed from "go" (forking and connecting excluded)`,
  size: { full: 400, quick: 40 },
  target: 'job-redis serialize ≤ 1× the hand spin lock',
  peers: [
    { name: 'hand SET NX PX, 1 ms retry', baseline: true, run: (n) => contended('hand', n) },
    { name: 'job-redis serialize', run: (n) => contended('job-redis', n) },
  ],
  verify(_peer, result) {
    check(result.bodies === result.calls, `${result.bodies} bodies ran, expected ${result.calls}`)
    check(result.overlaps === 0, `${result.overlaps} bodies overlapped the one before`)
  },
  checks: [
    {
      label: 'job-redis serialize ≤ 1× the hand spin lock',
      subject: 'job-redis serialize',
      kind: 'ratio',
      max: 1,
    },
  ],
}
