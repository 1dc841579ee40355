// A consumer process of the postgres-bus scenario: one @vega/job-postgres bus
// consumer, one pg-boss worker or one graphile-worker runner, alive across
// rounds, with the same handler (it counts itself and checks that each id's
// sequence only grows). Reports its count to the parent at most every 10 ms
// while it changes. Every connection it opens carries application_name
// `<name>-<index>`, so the parent counts them in pg_stat_activity.

import { createPostgresAggregateBus } from '@vega/job-postgres'
import { Logger, run as runGraphile } from 'graphile-worker'
import pg from 'pg'
import { PgBoss } from 'pg-boss'

let handled = 0
let reported = -1
let outOfOrder = 0
const last = new Map()
const tell = (message) => {
  if (process.connected) process.send(message)
}

// The same handler for every peer: count, check the id's order, yield once.
async function handler(id, seq) {
  if ((last.get(id) ?? 0) > seq) outOfOrder++
  last.set(id, seq)
  await null
  handled++
}

process.once('message', async ({ url, peer, name, index, partitions, parallelism }) => {
  const connectionString = `${url}?application_name=${name}-${index}`
  let stop
  let ownedTimer
  if (peer === 'bus') {
    const pool = new pg.Pool({ connectionString, max: 10 })
    const bus = createPostgresAggregateBus({ pool, schema: name, partitions, leaseMs: 10_000 })
    const consumer = bus.consume('bench.Order', (d) => handler(d.id, d.body.seq), { parallelism })
    ownedTimer = setInterval(() => tell({ t: 'owned', owned: consumer.owned().length }), 20)
    stop = async () => {
      await consumer.stop({ mode: 'handover', deadline: 1000 })
      await pool.end()
    }
  } else if (peer === 'pg-boss') {
    const boss = new PgBoss({ connectionString, schema: name, max: 10, useListenNotify: true })
    boss.on('error', () => {})
    await boss.start()
    // key_strict_fifo: one job per singletonKey (the id) active at a time, in order; a batch holds one head per key.
    await boss.work(
      name,
      { batchSize: parallelism, burstWhenBatchFull: true, pollingIntervalSeconds: 0.5 },
      async (jobs) => {
        await Promise.all(jobs.map((job) => handler(job.data.id, job.data.seq)))
      },
    )
    stop = () => boss.stop({ graceful: true, wait: true, timeout: 2000 })
  } else {
    // graphile-worker: jobs of one named queue (a key group) run one at a time, in order.
    const runner = await runGraphile({
      connectionString,
      schema: name,
      concurrency: parallelism,
      // One connection per concurrent job and one to listen, as graphile-worker advises.
      maxPoolSize: parallelism + 1,
      noHandleSignals: true,
      // Its warnings and errors only: its default logger prints a line per job.
      logger: new Logger((scope) => (level, message) => {
        if (level === 'error' || level === 'warning')
          console.error(`graphile-worker ${JSON.stringify(scope)}: ${message}`)
      }),
      pollInterval: 500,
      taskList: { m: async (payload) => handler(payload.id, payload.seq) },
    })
    stop = () => runner.stop()
  }
  const timer = setInterval(() => {
    if (handled === reported) return
    reported = handled
    tell({ t: 'count', handled, outOfOrder })
  }, 10)
  tell({ t: 'ready' })
  process.on('message', async (message) => {
    if (message.t !== 'stop') return
    clearInterval(timer)
    clearInterval(ownedTimer)
    await stop()
    process.disconnect()
  })
})
