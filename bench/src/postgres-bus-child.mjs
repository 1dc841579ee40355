// A consumer process of the postgres-bus scenario: one @vega/job-postgres bus
// consumer, one pg-boss worker or one graphile-worker runner, alive across
// rounds, with the handler every peer shares (see serveConsumer in
// distributed.mjs). Every connection it opens carries application_name
// `<name>-<index>`, so the parent counts them in pg_stat_activity.

import { createPostgresAggregateBus } from '@vega/job-postgres'
import { Logger, run as runGraphile } from 'graphile-worker'
import pg from 'pg'
import { PgBoss } from 'pg-boss'
import { serveConsumer } from './distributed.mjs'

serveConsumer(async ({ url, peer, name, index, partitions, parallelism }, handler) => {
  const connectionString = `${url}?application_name=${name}-${index}`
  if (peer === 'bus') {
    const pool = new pg.Pool({ connectionString, max: 10 })
    const bus = createPostgresAggregateBus({ pool, schema: name, partitions, leaseMs: 10_000 })
    const consumer = bus.consume('bench.Order', (d) => handler(d.id, d.body.seq), { parallelism })
    return {
      owned: () => consumer.owned().length,
      async stop() {
        await consumer.stop({ mode: 'handover', deadline: 1000 })
        await pool.end()
      },
    }
  }
  if (peer === 'pg-boss') {
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
    return { stop: () => boss.stop({ graceful: true, wait: true, timeout: 2000 }) }
  }
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
  return { stop: () => runner.stop() }
})
