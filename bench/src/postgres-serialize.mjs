// Postgres scenario 2: contended serialize across 4 processes — each forks
// with its own runtime and pool and issues its calls on one key at once;
// bodies never overlap (checked from their intervals). Peer: a hand
// pg_advisory_lock loop (each call takes a pool connection, blocks in
// pg_advisory_lock, runs, pg_advisory_unlock). Info row: the floor of a
// lease kept in a table and handed over by NOTIFY (see HAND_LINE).

import { fileURLToPath } from 'node:url'
import { migrate } from '@vega/job-postgres'
import pg from 'pg'
import { contended as contendedRun } from './distributed.mjs'
import { check } from './harness.mjs'
import { HAND_LINE, postgresUrl } from './postgres-server.mjs'

// The server starts, and the schema is made, when the scenario loads.
const setupPool = new pg.Pool({ connectionString: await postgresUrl(), max: 1 })
await migrate(setupPool, { schema: 'vega_bench' })
await setupPool.query(HAND_LINE)
await setupPool.end()

const PROCESSES = 4
const WORK_MS = 1
const CHILD = fileURLToPath(new URL('./postgres-child.mjs', import.meta.url))
let rounds = 0

/** Forks the processes, waits until all are connected, then starts them together; times only the calls. */
async function contended(peer, n) {
  const calls = Math.ceil(n / PROCESSES)
  const message = {
    url: await postgresUrl(),
    key: `bench-contended-${++rounds}`,
    peer,
    calls,
    workMs: WORK_MS,
  }
  const run = await contendedRun({ script: CHILD, processes: PROCESSES, message })
  return {
    calls: calls * PROCESSES,
    bodies: run.bodies,
    overlaps: run.overlaps,
    connections: Math.max(...run.reports.map((r) => r.connections)),
    perSecond: run.perSecond,
  }
}

export default {
  id: 'postgres-serialize',
  title: `serialize on one key across ${PROCESSES} processes (bodies of ${WORK_MS} ms, pools of 4), calls issued at once, timed from "go" (forking and connecting excluded)`,
  size: { full: 400, quick: 40 },
  target: 'job-postgres serialize ≤ 1× the hand pg_advisory_lock loop',
  peers: [
    { name: 'hand pg_advisory_lock loop', baseline: true, run: (n) => contended('hand', n) },
    {
      name: 'floor: a hand table lease handed over by NOTIFY',
      info: true,
      run: (n) => contended('hand-notify', n),
    },
    { name: 'job-postgres serialize', run: (n) => contended('job-postgres', n) },
  ],
  verify(_peer, result) {
    check(result.bodies === result.calls, `${result.bodies} bodies ran, expected ${result.calls}`)
    check(result.overlaps === 0, `${result.overlaps} bodies overlapped the one before`)
  },
  checks: [
    {
      label: 'job-postgres serialize ≤ 1× the hand advisory-lock loop',
      subject: 'job-postgres serialize',
      kind: 'ratio',
      max: 1,
    },
  ],
}
