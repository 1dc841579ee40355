// One process of the multi-process tests: its own runtime, its own Redis
// client (one server's, or a Redis Cluster's), the BUILT package (dist), driven by the parent over IPC. Bodies
// report when they enter and leave, with a clock every process shares.

import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, isCancelledError, run, settle, shutdown, subscribe } from '@vega/job-core'
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

/** Bodies that hold until the parent opens them ({ cmd: 'open', n }). */
const gates = new Map()

async function call({ n, strategy, key, bodyMs, value, fence, ignoreSignal, assertAtEnd, gated }) {
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
      if (gated) await new Promise((resolve) => gates.set(n, resolve))
      else if (ignoreSignal) await new Promise((resolve) => setTimeout(resolve, bodyMs))
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

/**
 * Holds the handshake of the coordination's subscriber connection (its
 * socket corked from its 'connect') until `release`: the boot calls' first
 * replies come back while it still runs, so the waiters' subscriptions are
 * asked for during the handshake, as happens on a loaded machine whenever
 * the first replies beat it. Released at the latest after 2 s (a dedupe
 * joiner's wait says nothing in its process).
 */
function holdHandshake(client) {
  let stream
  let released = false
  const release = () => {
    if (released) return
    released = true
    clearTimeout(timer)
    // After the tick: the subscription a reply just asked for is written into the held socket first.
    setImmediate(() => stream?.uncork())
  }
  const timer = setTimeout(release, 2000)
  const duplicate = client.duplicate.bind(client)
  client.duplicate = (...args) => {
    client.duplicate = duplicate
    const subscriber = duplicate(...args)
    subscriber.once('connect', () => {
      if (released) return
      stream = subscriber.stream
      stream.cork()
    })
    return subscriber
  }
  return { release }
}

process.on('message', async (message) => {
  if (message.cmd === 'init') {
    // The ioredis major the parent names: 'ioredis' (what the package depends on) or an alias such as 'ioredis-6'.
    const { Cluster, Redis } = await import(message.ioredis ?? 'ioredis')
    redis =
      message.clusterPorts === undefined
        ? new Redis(message.url, { maxRetriesPerRequest: null })
        : new Cluster(
            message.clusterPorts.map((port) => ({ host: '127.0.0.1', port })),
            { redisOptions: { maxRetriesPerRequest: null } },
          )
    redis.on('error', () => {})
    // A service at boot: its client connected, it makes its engine and issues its calls in one tick.
    let handshakeHeld
    if (message.boot !== undefined) {
      await redis.ping()
      if (!redis.isCluster) handshakeHeld = holdHandshake(redis)
    }
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
    for (const n of message.boot?.ns ?? []) {
      call({ ...message.boot.spec, n }).catch((error) =>
        send({ t: 'crash', n, error: describe(error) }),
      )
    }
    // A call's first reply that did not grant came back: its waiter asked for the key's channel then.
    if (handshakeHeld !== undefined) {
      subscribe(runtime, (event) => {
        if (event.type === 'coordination:queued') handshakeHeld.release()
      })
    }
    await redis.ping()
    send({ t: 'ready', pid: process.pid })
  } else if (message.cmd === 'call') {
    call(message).catch((error) => send({ t: 'crash', n: message.n, error: describe(error) }))
  } else if (message.cmd === 'open') {
    gates.get(message.n)?.()
  } else if (message.cmd === 'inspect') {
    send({ t: 'inspect', state: cluster.inspect() })
  } else if (message.cmd === 'counters') {
    send({ t: 'counters', asked: message.asked, counters: cluster.counters() })
  } else if (message.cmd === 'shutdown') {
    await shutdown(runtime)
    send({ t: 'inspect', state: cluster.inspect() })
    redis.disconnect()
    send({ t: 'down' })
    process.disconnect()
  }
})
