// One process of the multi-process tests: its own runtime, its own Redis
// client (one server's, or a Redis Cluster's), the BUILT package (dist), driven by the parent over IPC. Bodies
// report when they enter and leave, with a clock every process shares.

import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, isCancelledError, run, settle, shutdown, subscribe } from '@vega/job-core'
import { Cluster, Redis } from 'ioredis'
import { assertLease, createRedisCoordination, fencingToken } from '../../dist/index.js'

// The system-wide monotonic clock: every process on the machine reads the same one.
const now = () => Number(process.hrtime.bigint()) / 1e6
const send = (message) => process.send?.(message)

let cluster
let runtime
let redis

function describe(error) {
  if (isCancelledError(error)) return { name: 'CancelledError', reason: error.reason }
  if (error instanceof Error) return { name: error.name, message: error.message }
  return { name: typeof error, message: String(error) }
}

function coordinatorOf(strategy) {
  if (strategy === 'serialize2') return cluster.createSerialize({ concurrency: 2 })
  return cluster[strategy]
}

const coordinators = new Map()

async function call({ n, strategy, key, bodyMs, value, fence, ignoreSignal, assertAtEnd }) {
  let coordinator = coordinators.get(strategy)
  if (coordinator === undefined) {
    coordinator = coordinatorOf(strategy)
    coordinators.set(strategy, coordinator)
  }
  const body = async (ctx) => {
    send({ t: 'enter', n, at: now(), pid: process.pid })
    ctx.signal.addEventListener('abort', () =>
      send({ t: 'aborted', n, at: now(), reason: describe(ctx.signal.reason) }),
    )
    try {
      if (fence) {
        const token = await fencingToken(ctx)
        send({ t: 'token', n, fence: token.fence, runId: token.runId })
      }
      if (ignoreSignal) await new Promise((resolve) => setTimeout(resolve, bodyMs))
      else await ctx.sleep(bodyMs)
      if (assertAtEnd) {
        const token = await assertLease(ctx)
        send({ t: 'asserted', n, fence: token.fence })
      }
      return value
    } finally {
      send({ t: 'exit', n, at: now() })
    }
  }
  const task = run(runtime, withCoordinator(body, coordinator, { key }))
  send({ t: 'called', n, id: task.id, at: now() })
  const outcome = await settle(task)
  const promise = await task.promise.then(
    (v) => ({ status: 'resolved', value: v }),
    (error) => ({ status: 'rejected', error: describe(error) }),
  )
  send({
    t: 'settled',
    n,
    at: now(),
    state: task.state,
    reason: task.cancelReason,
    outcome:
      outcome.status === 'error'
        ? { status: 'error', error: describe(outcome.error) }
        : { status: outcome.status },
    promise,
  })
}

process.on('message', async (message) => {
  if (message.cmd === 'init') {
    redis =
      message.clusterPorts === undefined
        ? new Redis(message.url, { maxRetriesPerRequest: null })
        : new Cluster(
            message.clusterPorts.map((port) => ({ host: '127.0.0.1', port })),
            { redisOptions: { maxRetriesPerRequest: null } },
          )
    redis.on('error', () => {})
    cluster = createRedisCoordination({
      redis,
      prefix: message.prefix,
      leaseMs: message.leaseMs,
      connectTimeoutMs: message.connectTimeoutMs,
    })
    runtime = createRuntime({ plugins: [installCoordination, cluster.plugin] })
    subscribe(runtime, (event) => {
      if (event.type.startsWith('coordination:')) send({ t: 'event', event })
    })
    await redis.ping()
    send({ t: 'ready', pid: process.pid })
  } else if (message.cmd === 'call') {
    call(message).catch((error) => send({ t: 'crash', n: message.n, error: describe(error) }))
  } else if (message.cmd === 'inspect') {
    send({ t: 'inspect', state: cluster.inspect() })
  } else if (message.cmd === 'shutdown') {
    await shutdown(runtime)
    send({ t: 'inspect', state: cluster.inspect() })
    redis.disconnect()
    send({ t: 'down' })
    process.disconnect()
  }
})
