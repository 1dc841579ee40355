// One of the lab's two processes: a runtime with the Redis (or the Postgres)
// coordination, driven by cli.mjs over IPC. It reports what its calls did, with a clock
// both processes share.

import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, isCancelledError, run, settle, shutdown, subscribe } from '@vega/job-core'

// The system-wide monotonic clock: every process on the machine reads the same one.
const now = () => Number(process.hrtime.bigint()) / 1e6
const send = (message) => process.send?.(message)
let runtime
let cluster
let devtools
/** Ends the engine's client once the runtime shut down. */
let disconnect

/** The engine's coordination on its client; each loaded only when chosen. */
async function coordinationOf({ engine, url, prefix }) {
  if (engine === 'postgres') {
    const { createPostgresCoordination } = await import('@vega/job-postgres')
    const { default: pg } = await import('pg')
    const pool = new pg.Pool({ connectionString: url, max: 4 })
    await pool.query('SELECT 1')
    disconnect = () => pool.end()
    return createPostgresCoordination({ pool, schema: prefix, leaseMs: 5000 })
  }
  const { createRedisCoordination } = await import('@vega/job-redis')
  const { Redis } = await import('ioredis')
  const redis = new Redis(url)
  await redis.ping()
  disconnect = () => redis.disconnect()
  return createRedisCoordination({ redis, prefix, leaseMs: 5000 })
}

/**
 * With `--devtools <url>`: this process's runtime as one session of the
 * standalone panel, over the protocol's WebSocket transport. Loaded only then.
 */
async function connectToRelay(runtime, url) {
  const { connectDevtools, createWebSocketTransport } = await import('@vega/job-devtools-protocol')
  // Node 20 has no global WebSocket; Node ≥ 22 does.
  const WebSocket = globalThis.WebSocket ?? (await import('ws')).WebSocket
  const transport = createWebSocketTransport(url, { WebSocket })
  const disconnect = connectDevtools(runtime, transport)
  return {
    stop() {
      // Sends what is still buffered, then closes the socket so the process can exit.
      disconnect()
      transport.close()
    },
  }
}

function promiseText(error) {
  if (isCancelledError(error)) return `rejected CancelledError (${error.reason})`
  return `rejected ${error?.name ?? 'Error'}: ${error?.message ?? error}`
}

process.on('message', async (message) => {
  if (message.cmd === 'init') {
    cluster = await coordinationOf(message)
    runtime = createRuntime({
      name: `${message.engine}-lab ${message.name}`,
      plugins: [installCoordination, cluster.plugin],
    })
    if (message.devtools !== undefined) devtools = await connectToRelay(runtime, message.devtools)
    subscribe(runtime, (event) => {
      if (event.type.startsWith('coordination:')) send({ t: 'event', event, at: now() })
    })
    send({ t: 'ready' })
  } else if (message.cmd === 'call') {
    const { call, value, strategy, duration, key } = message
    const body = async (ctx) => {
      send({ t: 'enter', call, at: now() })
      try {
        await ctx.sleep(duration)
        return value
      } finally {
        send({ t: 'exit', call, at: now() })
      }
    }
    const task = run(runtime, withCoordinator(body, cluster[strategy], { key }), {
      label: `call #${value} ${strategy}`,
    })
    send({ t: 'called', call, id: task.id, at: now() })
    const promise = await task.promise.then(
      (value) => `resolved ${JSON.stringify(value)}`,
      (error) => promiseText(error),
    )
    await settle(task)
    send({
      t: 'settled',
      call,
      at: now(),
      state: task.state,
      reason: task.cancelReason,
      id: task.id,
      cancelledBy: task.cancelledBy,
      promise,
    })
  } else if (message.cmd === 'stop') {
    await shutdown(runtime)
    devtools?.stop()
    await disconnect()
    process.disconnect()
  }
})
