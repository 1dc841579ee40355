// A worker process of the contended postgres scenario: `calls` calls on one
// key, all issued at once, either through job-postgres serialize or through a
// hand pg_advisory_lock loop; reports the bodies' intervals and the most
// connections it held to the parent.

import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, run, shutdown } from '@vega/job-core'
import { createPostgresCoordination } from '@vega/job-postgres'
import pg from 'pg'
import { serveContended } from './distributed.mjs'

serveContended(async ({ url, key, peer, calls }, body) => {
  const pool = new pg.Pool({ connectionString: url, max: 4 })
  await pool.query('SELECT 1')
  let connections = 0
  const count = () => {
    connections = Math.max(connections, pool.totalCount)
  }
  const close = async () => {
    await pool.end()
    return { connections }
  }
  if (peer === 'job-postgres') {
    const runAll = async () => {
      const coordination = createPostgresCoordination({
        pool,
        schema: 'vega_bench',
        leaseMs: 10_000,
      })
      const runtime = createRuntime({ plugins: [installCoordination, coordination.plugin] })
      const fn = withCoordinator(
        async () => {
          count()
          await body()
        },
        coordination.serialize,
        { key },
      )
      await Promise.all(Array.from({ length: calls }, () => run(runtime, fn)))
      await shutdown(runtime)
      connections += 1 // its LISTEN connection
    }
    return { run: runAll, close }
  }
  // A session advisory lock ties the key to the connection that took it: each call holds one.
  const one = async () => {
    const client = await pool.connect()
    count()
    try {
      await client.query('SELECT pg_advisory_lock(hashtext($1))', [key])
      try {
        await body()
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key])
      }
    } finally {
      client.release()
    }
  }
  return { run: () => Promise.all(Array.from({ length: calls }, one)), close }
})
