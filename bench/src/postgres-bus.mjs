// Postgres scenario: messages per second end to end through @vega/job-postgres's
// aggregate bus against pg-boss (a key_strict_fifo queue, singletonKey = the
// aggregate id) and graphile-worker (a named queue per key group, the id's
// toGroupKey over 64 groups), with 1, 2 and 4 consumer processes, on the
// bench's own Postgres. The bench process sends (64 in flight, ids
// round-robin, one id's messages one after the other); the consumers —
// forked once per peer and kept across rounds — run the same handler and
// report how many messages each handled and how many came out of order per
// id. What each peer's configuration guarantees about per-id order is in
// bench/README.md. After the rounds: the connections each consumer process
// held, and a scaled soak of the bus (a steady rate for a few minutes) that
// samples its message table's size.

import { fileURLToPath } from 'node:url'
import { createPostgresAggregateBus } from '@vega/job-postgres'
import { toGroupKey } from '@vega/job-scheduler'
import { Logger, makeWorkerUtils } from 'graphile-worker'
import pg from 'pg'
import { PgBoss } from 'pg-boss'
import { consumerProcesses, sendRound } from './distributed.mjs'
import { check } from './harness.mjs'
import { postgresUrl } from './postgres-server.mjs'

const CHILD = fileURLToPath(new URL('./postgres-bus-child.mjs', import.meta.url))
const PARTITIONS = 64
const PARALLELISM = 16
const IDS = 1000
const WINDOW = 64
const PG_BOSS = 'pg-boss 12.38.0 (key_strict_fifo)'
const GRAPHILE = 'graphile-worker 0.18.0 (a queue per key group)'
const BUS = 'job-postgres bus'

// The server starts when the scenario loads, so no timed run pays for it.
await postgresUrl()
// graphile-worker's schemas are all migrated before any runner starts: a
// migration announces itself on a channel every runner hears, whatever its
// schema, and a runner that hears a breaking one shuts down.
for (const k of [1, 2, 4]) {
  const utils = await makeWorkerUtils({
    connectionString: await postgresUrl(),
    schema: `bench_gw_${k}`,
    logger: new Logger(() => () => {}),
  })
  await utils.migrate()
  await utils.release()
}

const pools = new Map()
process.on('exit', () => {
  for (const pool of pools.values()) for (const child of pool.children) child.kill('SIGKILL')
})

const short = { bus: 'bus', 'pg-boss': 'boss', graphile: 'gw' }

/** k consumer processes of one peer, started on first use and kept. */
async function pool(peer, k) {
  const key = `${peer}-${k}`
  let found = pools.get(key)
  if (found !== undefined) return found
  const url = await postgresUrl()
  const name = `bench_${short[peer]}_${k}`
  const sender = new pg.Pool({
    connectionString: `${url}?application_name=${name}-sender`,
    max: 20,
  })
  let send
  let close
  // Each peer's schema and queue exist before its consumers start.
  if (peer === 'bus') {
    const bus = createPostgresAggregateBus({
      pool: sender,
      schema: name,
      partitions: PARTITIONS,
      leaseMs: 10_000,
    })
    send = (id, seq) => bus.send({ aggregate: 'bench.Order', id, body: { id, seq } })
    await send('warm-up', 0)
    close = () => sender.end()
  } else if (peer === 'pg-boss') {
    const boss = new PgBoss({
      connectionString: `${url}?application_name=${name}-sender`,
      schema: name,
      max: 20,
    })
    boss.on('error', () => {})
    await boss.start()
    await boss.createQueue(name, { policy: 'key_strict_fifo', notify: true })
    send = (id, seq) => boss.send(name, { id, seq }, { singletonKey: id })
    close = () => boss.stop({ graceful: false })
  } else {
    const utils = await makeWorkerUtils({
      connectionString: `${url}?application_name=${name}-sender`,
      schema: name,
      logger: new Logger(() => () => {}),
    })
    await utils.migrate()
    send = (id, seq) =>
      utils.addJob('m', { id, seq }, { queueName: `g${toGroupKey(id, PARTITIONS)}` })
    close = () => utils.release()
  }
  const { children, counts, until } = await consumerProcesses(CHILD, k, (index) => ({
    url,
    peer,
    name,
    index,
    partitions: PARTITIONS,
    parallelism: PARALLELISM,
  }))
  if (peer === 'bus') {
    // Joined and spread before the first round: a round measures the steady state.
    await until(() => counts.reduce((sum, c) => sum + c.owned, 0) === PARTITIONS)
    await until(() => counts.reduce((sum, c) => sum + c.handled, 0) >= 1)
  }
  found = { name, children, counts, until, send, seq: 0, close }
  pools.set(key, found)
  return found
}

/** The most connections each consumer process held at once, sampled while rounds run. */
const held = new Map()
let admin
async function sampleConnections(p) {
  admin ??= new pg.Pool({ connectionString: await postgresUrl(), max: 1 })
  const { rows } = await admin.query(
    `SELECT application_name AS app, count(*)::int AS n FROM pg_stat_activity
     WHERE starts_with(application_name, $1) AND application_name <> $2 GROUP BY 1`,
    [`${p.name}-`, `${p.name}-sender`],
  )
  for (const row of rows) held.set(row.app, Math.max(held.get(row.app) ?? 0, row.n))
}

async function endToEnd(peer, k, n) {
  const p = await pool(peer, k)
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      await sampleConnections(p)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  })()
  const result = await sendRound(p, n, { ids: IDS, window: WINDOW })
  sampling = false
  await sampler
  return result
}

const names = { bus: BUS, 'pg-boss': PG_BOSS, graphile: GRAPHILE }
const label = (peer, k) => `${names[peer]}, ${k} consumer process${k > 1 ? 'es' : ''}`
const peers = []
for (const k of [1, 2, 4]) {
  peers.push({
    name: label('pg-boss', k),
    baseline: k === 1,
    run: (n) => endToEnd('pg-boss', k, n),
  })
  peers.push({ name: label('graphile', k), run: (n) => endToEnd('graphile', k, n) })
  peers.push({ name: label('bus', k), run: (n) => endToEnd('bus', k, n) })
}

/** The most connections each consumer process of a peer held while its rounds ran. */
function connectionsPerProcess(p) {
  return p.children.map((_, index) => held.get(`${p.name}-${index}`) ?? 0)
}

/**
 * The scaled soak: the bus with 2 consumer processes at a steady rate (sends
 * paced per 100 ms) for `seconds`, the message table's size sampled every
 * `every` seconds. Autovacuum as the server's defaults plus the table's own
 * storage parameters (migration 2).
 */
async function soak(admin, seconds, every, rate) {
  const p = await pool('bus', 2)
  const samples = []
  const table = `"${p.name}".bus_message`
  // Every table of the bus's schema with its indexes and TOAST: the message
  // table alone could stay flat while dead letters or leases grow.
  const sizes = async () =>
    (
      await admin.query(
        `SELECT pg_total_relation_size($1)::bigint AS message,
                (SELECT sum(pg_total_relation_size(c.oid))::bigint
                   FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname = $2 AND c.relkind = 'r') AS schema`,
        [table, p.name],
      )
    ).rows[0]
  const started = performance.now()
  let sent = 0
  let seq = p.seq + 1
  p.seq += Math.ceil((seconds * rate) / IDS) + 1
  let nextSample = every * 1000
  while (performance.now() - started < seconds * 1000) {
    const tickStart = performance.now()
    const batch = Math.round(rate / 10)
    await Promise.all(
      Array.from({ length: batch }, (_, j) => {
        const i = sent + j
        return p.send(`order-${i % IDS}`, seq + Math.floor(i / IDS))
      }),
    )
    sent += batch
    if (performance.now() - started >= nextSample) {
      const { message, schema } = await sizes()
      samples.push({
        at: Math.round((performance.now() - started) / 1000),
        bytes: Number(message),
        schemaBytes: Number(schema),
      })
      nextSample += every * 1000
    }
    const left = 100 - (performance.now() - tickStart)
    if (left > 0) await new Promise((resolve) => setTimeout(resolve, left))
  }
  seq += Math.floor(sent / IDS)
  const handledAt = p.counts.reduce((sum, c) => sum + c.handled, 0)
  return { sent, samples, handledAt }
}

export default {
  id: 'postgres-bus',
  title: `messages end to end (send → handled) over ${IDS} ids, ${PARALLELISM} in flight per consumer process, ${PARTITIONS} partitions / key groups, ${WINDOW} sends in flight; consumers forked once and kept across rounds`,
  size: { full: 10_000, quick: 1_000 },
  target:
    'the bus faster than pg-boss and graphile-worker at 1, 2 and 4 consumer processes, per-id order kept',
  peers,
  verify(peer, result) {
    check(result.handled === result.sent, `${result.handled} handled, expected ${result.sent}`)
    if (peer.startsWith(BUS)) {
      check(result.outOfOrder === 0, `${result.outOfOrder} messages handled out of order per id`)
    }
  },
  checks: [1, 2, 4].flatMap((k) => [
    {
      label: `bus vs pg-boss, ${k} consumer process${k > 1 ? 'es' : ''}`,
      subject: label('bus', k),
      kind: 'relative',
      to: label('pg-boss', k),
      max: 1,
    },
    {
      label: `bus vs graphile-worker, ${k} consumer process${k > 1 ? 'es' : ''}`,
      subject: label('bus', k),
      kind: 'relative',
      to: label('graphile', k),
      max: 1,
    },
  ]),
  async extra({ options, log }) {
    admin ??= new pg.Pool({ connectionString: await postgresUrl(), max: 1 })
    const metrics = {}
    for (const [key, p] of pools) {
      const [peer] = key.split(/-(?=\d+$)/)
      metrics[`most connections held per consumer process, ${label(peer, p.children.length)}`] =
        connectionsPerProcess(p).join(', ')
      const outOfOrder = p.counts.reduce((sum, c) => sum + c.outOfOrder, 0)
      metrics[`handled out of order per id, ${label(peer, p.children.length)}`] = String(outOfOrder)
    }
    // POSTGRES_BUS_SOAK_SECONDS sets the soak's length (default 300 s, quick 60 s).
    const seconds = Number(process.env.POSTGRES_BUS_SOAK_SECONDS ?? (options.quick ? 60 : 300))
    const every = seconds >= 120 ? 30 : 15
    const rate = 500
    log(`  soak: the bus, 2 consumer processes, ${rate} messages/s for ${seconds} s`)
    const { sent, samples } = await soak(admin, seconds, every, rate)
    const kib = samples.map((s) => `${s.at}s ${(s.bytes / 1024).toFixed(0)} KiB`)
    metrics[
      `soak: bus_message size, ${rate} msg/s for ${seconds} s (${sent} messages), 2 consumers`
    ] = kib.join(', ')
    metrics[`soak: every table of the bus's schema, ${rate} msg/s for ${seconds} s`] = samples
      .map((s) => `${s.at}s ${(s.schemaBytes / 1024).toFixed(0)} KiB`)
      .join(', ')
    const half = Math.floor(samples.length / 2)
    const largest = (from, to, field) => Math.max(...samples.slice(from, to).map((s) => s[field]))
    const flat = (field) => {
      const first = largest(0, half, field)
      const second = largest(half, samples.length, field)
      return {
        ratio: Math.round((second / Math.max(1, first)) * 1000) / 1000,
        met: second <= first * 1.5,
      }
    }
    const message = flat('bytes')
    const schema = flat('schemaBytes')
    await admin.end()
    admin = undefined
    for (const p of pools.values()) {
      for (const child of p.children) child.send({ t: 'stop' })
    }
    await Promise.all(
      [...pools.values()].flatMap((p) =>
        p.children.map((child) => new Promise((resolve) => child.once('disconnect', resolve))),
      ),
    )
    for (const p of pools.values()) await p.close()
    pools.clear()
    return {
      metrics,
      checks: [
        {
          label: 'soak: bus_message no larger in its second half than 1.5× its first half',
          value: message.ratio,
          limit: 1.5,
          met: message.met,
        },
        {
          label: "soak: the bus's schema no larger in its second half than 1.5× its first half",
          value: schema.ratio,
          limit: 1.5,
          met: schema.met,
        },
      ],
    }
  },
}
