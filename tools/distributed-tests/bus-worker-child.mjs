// The engine-neutral side of one process of the bus's multi-process tests: a
// producer or a consumer of 'sales.Order', driven over IPC. Handlers log
// every entry and exit with writeSync (a SIGKILL loses no line), stamped with
// the system-wide monotonic clock every process on the machine shares. An
// engine's child only says how to connect (see bus-worker-child.d.ts).

import { openSync, writeSync } from 'node:fs'

const now = () => Number(process.hrtime.bigint()) / 1e6
const send = (message) => process.send?.(message)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Serves the parent's commands (init, consume, produce, stats, stop) with `engine`'s bus. */
export function serveBusWorker(engine) {
  let connection
  let consumer
  let log
  let handled = 0
  let slow = new Map()
  let handlerMs = 0

  async function handle(delivery) {
    const { id, body, attempt, fence } = delivery
    writeSync(log, `E ${id} ${body.seq} ${attempt} ${fence} ${now()}\n`)
    await engine.effect?.(delivery)
    const ms = slow.get(id) ?? handlerMs
    if (ms > 0) await sleep(ms)
    else await new Promise((resolve) => setImmediate(resolve))
    writeSync(log, `X ${id} ${body.seq} ${attempt} ${fence} ${now()}\n`)
    handled++
  }

  process.on('message', async (message) => {
    if (message.cmd === 'init') {
      if (message.log) log = openSync(message.log, 'a')
      connection = await engine.connect(message)
      send({ t: 'ready', pid: process.pid })
    } else if (message.cmd === 'consume') {
      handlerMs = message.handlerMs ?? 0
      slow = new Map(Object.entries(message.slow ?? {}))
      consumer = connection.bus.consume('sales.Order', handle, {
        parallelism: message.parallelism ?? 16,
        ...engine.consumeOptions?.(message),
      })
      send({ t: 'consuming', id: consumer.id, at: now() })
      setInterval(() => send({ t: 'progress', handled, owned: consumer.owned(), at: now() }), 50)
    } else if (message.cmd === 'produce') {
      const { ids, perId, from = 1 } = message
      for (let seq = from; seq <= perId; seq++) {
        // A failed send (the server restarting) is sent again: its place is where it finally lands.
        await Promise.all(
          ids.map(async (id) => {
            for (;;) {
              try {
                return await connection.bus.send({ aggregate: 'sales.Order', id, body: { seq } })
              } catch {
                await sleep(50)
              }
            }
          }),
        )
        if (seq % 5 === 0) send({ t: 'sent', count: (seq - from + 1) * ids.length })
      }
      send({ t: 'produced', count: (perId - from + 1) * ids.length, at: now() })
    } else if (message.cmd === 'stats') {
      send({ t: 'stats', stats: await consumer.stats(), owned: consumer.owned() })
    } else if (message.cmd === 'stop') {
      const report =
        consumer === undefined ? undefined : await consumer.stop({ mode: message.mode ?? 'drain' })
      await connection.close()
      send({ t: 'stopped', report })
      process.exit(0)
    }
  })
}
