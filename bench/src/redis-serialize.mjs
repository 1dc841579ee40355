// Redis scenario 2: contended serialize across 4 processes — each forks with
// its own runtime and issues its calls on one key at once; bodies never
// overlap (checked from their intervals). Peer: the same hand SET NX PX lease
// as the lower bound of redis-overhead, with a 1 ms retry loop.

import { fileURLToPath } from 'node:url'
import { contended as contendedRun } from './distributed.mjs'
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
  const calls = Math.ceil(n / PROCESSES)
  const message = {
    url: await redisUrl(),
    prefix: `bench-contended-${++rounds}`,
    peer,
    calls,
    workMs: WORK_MS,
  }
  const { bodies, overlaps, perSecond } = await contendedRun({
    script: CHILD,
    processes: PROCESSES,
    message,
  })
  return { calls: calls * PROCESSES, bodies, overlaps, perSecond }
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
