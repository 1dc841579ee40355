// A worker process of the contended postgres scenario: `calls` calls on one
// key, all issued at once, through job-postgres serialize, a hand
// pg_advisory_lock loop, or a hand table lease handed over by NOTIFY; reports the bodies' intervals and the most
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
  if (peer === 'hand-notify') {
    // One LISTEN connection for the process; a waiting call is named in the NOTIFY of the give that hands it the key.
    const listen = new pg.Client({ connectionString: url })
    await listen.connect()
    await listen.query('LISTEN bench_hand')
    const waiting = new Map()
    const handed = (id) => {
      const resume = waiting.get(id)
      if (resume === undefined) return
      waiting.delete(id)
      resume()
    }
    listen.on('notification', (message) => handed(message.payload))
    let made = 0
    const one = async () => {
      const id = `${process.pid}.${++made}`
      const turn = new Promise((resolve) => waiting.set(id, resolve))
      const taken = await pool.query({
        name: 'take',
        text: 'SELECT bench_hand_take($1, $2) AS granted',
        values: [key, id],
      })
      count()
      if (taken.rows[0].granted) waiting.delete(id)
      else await turn
      await body()
      const given = await pool.query({
        name: 'give',
        text: 'SELECT bench_hand_give($1, $2) AS head',
        values: [key, id],
      })
      // The next holder in this process starts on this reply, not on its NOTIFY.
      if (given.rows[0].head !== null) handed(given.rows[0].head)
    }
    return {
      run: () => Promise.all(Array.from({ length: calls }, one)),
      close: async () => {
        await listen.end()
        const report = await close()
        return { connections: report.connections + 1 }
      },
    }
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
