// One of the lab's two processes: a runtime with the Redis coordination,
// driven by cli.mjs over IPC. It reports what its calls did, with a clock
// both processes share.

import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, isCancelledError, run, settle, shutdown, subscribe } from '@vega/job-core'
import { createRedisCoordination } from '@vega/job-redis'
import { Redis } from 'ioredis'

// The system-wide monotonic clock: every process on the machine reads the same one.
const now = () => Number(process.hrtime.bigint()) / 1e6
const send = (message) => process.send?.(message)
let runtime
let cluster
let redis
let devtools

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
    redis = new Redis(message.url)
    cluster = createRedisCoordination({ redis, prefix: message.prefix, leaseMs: 5000 })
    runtime = createRuntime({
      name: `redis-lab ${message.name}`,
      plugins: [installCoordination, cluster.plugin],
    })
    if (message.devtools !== undefined) devtools = await connectToRelay(runtime, message.devtools)
    subscribe(runtime, (event) => {
      if (event.type.startsWith('coordination:')) send({ t: 'event', event, at: now() })
    })
    await redis.ping()
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
    redis.disconnect()
    process.disconnect()
  }
})
