// One process of the multi-process tests: its own Redis client (one server's,
// or a Redis Cluster's) and the BUILT package (dist), served by the
// engine-neutral worker (@vega/distributed-tests).

import { serveWorker } from '@vega/distributed-tests/worker-child'
import { subscribe } from '@vega/job-core'
import { assertLease, createRedisCoordination, fencingToken } from '../../dist/index.js'

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

serveWorker({
  async connect(message) {
    // The ioredis major the parent names: 'ioredis' (what the package depends on) or an alias such as 'ioredis-6'.
    const { Cluster, Redis } = await import(message.ioredis ?? 'ioredis')
    const redis =
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
    return {
      coordination: createRedisCoordination({
        redis,
        prefix: message.prefix,
        leaseMs: message.leaseMs,
        connectTimeoutMs: message.connectTimeoutMs,
      }),
      fencingToken,
      assertLease,
      ping: () => redis.ping(),
      close: () => redis.disconnect(),
      started(runtime) {
        if (handshakeHeld === undefined) return
        // A call's first reply that did not grant came back: its waiter asked for the key's channel then.
        subscribe(runtime, (event) => {
          if (event.type === 'coordination:queued') handshakeHeld.release()
        })
      },
    }
  },
})
