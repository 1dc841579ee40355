// One process of the bus's multi-process tests: a producer or a consumer of
// 'sales.Order' on the BUILT package (dist), driven over IPC. Handlers log
// every entry and exit with writeSync (a SIGKILL loses no line), stamped with
// the system-wide monotonic clock every process on the machine shares. In
// transaction mode a handler also writes one row per delivery through its
// `tx` into the effects table (the application's write).

import { openSync, writeSync } from 'node:fs'
import pg from 'pg'
import { createPostgresAggregateBus } from '../../dist/index.js'

const now = () => Number(process.hrtime.bigint()) / 1e6
const send = (message) => process.send?.(message)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

let pool
let bus
let consumer
let log
let handled = 0
let slow = new Map()
let handlerMs = 0
let effects

async function handle(delivery) {
  const { id, body, attempt, fence, tx } = delivery
  writeSync(log, `E ${id} ${body.seq} ${attempt} ${fence} ${now()}\n`)
  if (tx !== undefined) {
    await tx.query(`INSERT INTO ${effects} (id, seq, fence) VALUES ($1, $2, $3)`, [
      id,
      body.seq,
      fence,
    ])
  }
  const ms = slow.get(id) ?? handlerMs
  if (ms > 0) await sleep(ms)
  else await new Promise((resolve) => setImmediate(resolve))
  writeSync(log, `X ${id} ${body.seq} ${attempt} ${fence} ${now()}\n`)
  handled++
}

process.on('message', async (message) => {
  if (message.cmd === 'init') {
    pool = new pg.Pool({ connectionString: message.url, max: message.poolSize ?? 10 })
    pool.on('error', () => {})
    bus = createPostgresAggregateBus({
      pool,
      schema: message.schema,
      partitions: message.partitions,
      leaseMs: message.leaseMs,
    })
    effects = message.effects
    if (message.log) log = openSync(message.log, 'a')
    await pool.query('SELECT 1')
    send({ t: 'ready', pid: process.pid })
  } else if (message.cmd === 'consume') {
    handlerMs = message.handlerMs ?? 0
    slow = new Map(Object.entries(message.slow ?? {}))
    consumer = bus.consume('sales.Order', handle, {
      parallelism: message.parallelism ?? 16,
      transaction: message.transaction === true,
    })
    send({ t: 'consuming', id: consumer.id, at: now() })
    setInterval(() => send({ t: 'progress', handled, owned: consumer.owned(), at: now() }), 50)
  } else if (message.cmd === 'produce') {
    const { ids, perId, from = 1 } = message
    for (let seq = from; seq <= perId; seq++) {
      // A failed send (Postgres restarting) is sent again: its place is where it finally lands.
      await Promise.all(
        ids.map(async (id) => {
          for (;;) {
            try {
              return await bus.send({ aggregate: 'sales.Order', id, body: { seq } })
            } catch {
              await sleep(50)
            }
          }
        }),
      )
    }
    send({ t: 'produced', at: now() })
  } else if (message.cmd === 'stats') {
    send({ t: 'stats', stats: await consumer.stats() })
  } else if (message.cmd === 'stop') {
    const report = consumer === undefined ? undefined : await consumer.stop()
    await pool.end()
    send({ t: 'stopped', report })
    process.exit(0)
  }
})
