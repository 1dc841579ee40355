import { assertKnownKeys } from '@vega/job-core'
import {
  type AggregateBusConsumer,
  type BusMessage,
  checkBusMessage,
  checkDeadLettersCall,
  createBusConsumer,
  type DeadLetter,
  type DeliveryHandler,
  decodeDeadLetter,
  describeValue,
  prepareBusConsumer,
  resolveBusOptions,
  type SendReceipt,
} from '@vega/job-distributed'
import { toGroupKey } from '@vega/job-scheduler'
import type { ConsumeOptions, RedisAggregateBus, RedisAggregateBusOptions } from './bus-types.js'
import { RedisBusEngine } from './internal/bus/engine.js'
import { BusKeys } from './internal/bus/keys.js'
import { commandStep, runByNode } from './internal/bus/nodes.js'
import { busScripts } from './internal/bus/scripts.js'
import { io } from './internal/io.js'
import type { RedisClient } from './internal/redis-io.js'

/** Orders stream entry ids (`<ms>-<seq>`) as Redis does. */
function compareEntryIds(a: string, b: string): number {
  const [aMs = 0, aSeq = 0] = a.split('-').map(Number)
  const [bMs = 0, bSeq = 0] = b.split('-').map(Number)
  return aMs - bMs || aSeq - bSeq
}

function checkRedis(redis: unknown): RedisClient {
  const where = 'createRedisAggregateBus(options)'
  if (redis === undefined || redis === null) {
    throw new TypeError(
      `${where}: redis is missing; pass an ioredis client: { redis: new Redis(url), … } (or a new Cluster(nodes)).`,
    )
  }
  const client = redis as Partial<RedisClient>
  if (
    typeof client.evalsha !== 'function' ||
    typeof client.duplicate !== 'function' ||
    typeof client.status !== 'string'
  ) {
    throw new TypeError(
      `${where}: redis must be an ioredis client (new Redis(url) or new Cluster(nodes)), got ${describeValue(redis)}.`,
    )
  }
  if (client.status === 'end' || client.status === 'close') {
    throw new TypeError(
      `${where}: redis is a closed client (status '${client.status}'); pass an open one: quit() and disconnect() end a client for good.`,
    )
  }
  return redis as RedisClient
}

const BUS_OPTIONS = ['redis', 'prefix', 'partitions', 'leaseMs', 'codec', 'connectTimeoutMs']

/**
 * Per-aggregate order across processes (Wow's aggregate dispatching,
 * distributed), on Redis Streams. `send` appends a message to the stream of
 * partition `toGroupKey(id, partitions)` — the JVM-compatible key, so a
 * Kotlin Wow service agrees on where an id lives. Every `consume` in any
 * process joins the aggregate's consumers; each partition is owned by one
 * live consumer at a time under a fenced lease, partitions spread evenly
 * (none owns more than ⌈partitions / live⌉ once stable) and move when
 * consumers come and go. Inside a consumer an owned partition feeds a local
 * `AggregateDispatcher`: one message at a time per id, in stream order.
 *
 * Delivery is at-least-once: a message is acknowledged after its handler
 * settled, and the id's next message starts only once that acknowledgement
 * is confirmed; a consumer that dies leaves its unacknowledged messages to
 * the next owner, which handles them first. A handler that keeps throwing
 * sends its message to its partition's dead-letter stream; the id's later
 * messages go on. `redis` is a client of one primary or of a Redis Cluster
 * (every step touches one slot). Throws `TypeError` / `RangeError` for bad
 * options, before touching Redis.
 *
 * @example
 * ```ts
 * import { createRedisAggregateBus } from '@vega/job-redis'
 * import { Redis } from 'ioredis'
 *
 * const bus = createRedisAggregateBus({ redis: new Redis(), prefix: 'vj', partitions: 64, leaseMs: 10_000 })
 * await bus.send({ aggregate: 'sales.Order', id: 'order-7', body: { type: 'pay' } }) // producer
 * const consumer = bus.consume('sales.Order', async ({ id, body, fence }) => apply(id, body, fence), {
 *   parallelism: 16,
 * }) // every worker process
 * process.once('SIGTERM', () => void consumer.stop({ mode: 'drain', deadline: 10_000 }))
 * ```
 */
export function createRedisAggregateBus(options: RedisAggregateBusOptions): RedisAggregateBus {
  const where = 'createRedisAggregateBus(options)'
  if (options === null || typeof options !== 'object') {
    throw new TypeError(
      `${where}: options must be an object such as { redis, prefix: 'vj', partitions: 64, leaseMs: 10_000 }.`,
    )
  }
  assertKnownKeys(where, options, BUS_OPTIONS)
  const redis = checkRedis(options.redis)
  const { prefix } = options
  if (typeof prefix !== 'string' || prefix.trim() === '' || /\s/.test(prefix)) {
    throw new TypeError(
      `${where}: prefix must be a non-empty string without whitespace (it starts every key), got ${describeValue(prefix)}.`,
    )
  }
  const { partitions, leaseMs, codec, connectTimeoutMs } = resolveBusOptions(where, options)
  const keysOf = new Map<string, BusKeys>()
  const keys = (aggregate: string): BusKeys => {
    let found = keysOf.get(aggregate)
    if (found === undefined) {
      found = new BusKeys(prefix, aggregate)
      keysOf.set(aggregate, found)
    }
    return found
  }

  const send = <B>(message: BusMessage<B>): Promise<SendReceipt> => {
    const { aggregate, id, text } = checkBusMessage('bus.send(message)', message, codec)
    const partition = toGroupKey(id, partitions)
    const { stream, idle, wake } = keys(aggregate).partition(partition)
    return io
      .bounded('send', connectTimeoutMs, () =>
        busScripts.send.run(redis, [stream, idle], [wake, id, text]),
      )
      .then((entryId) => ({ partition, entryId: entryId as string }))
  }

  const consume = <B>(
    aggregate: string,
    handler: DeliveryHandler<B>,
    consumeOptions: ConsumeOptions = {},
  ): AggregateBusConsumer => {
    const config = prepareBusConsumer(
      'bus.consume(aggregate, handler, options)',
      aggregate,
      handler,
      consumeOptions,
      {
        engine: '@vega/job-redis',
        known: [],
        partitions,
        leaseMs,
        connectTimeoutMs,
        codec,
      },
    )
    const engine = new RedisBusEngine({ ...config, redis, keys: keys(aggregate) })
    return createBusConsumer(engine, config, handler as DeliveryHandler<unknown>)
  }

  const deadLetters = async <B>(aggregate: string, count = 100): Promise<DeadLetter<B>[]> => {
    checkDeadLettersCall(aggregate, count)
    // One dead-letter stream per partition (its slot): the oldest `count` of them all, by entry id.
    const dead = Array.from({ length: partitions }, (_, p) => keys(aggregate).partition(p).dead)
    const outcomes = await runByNode(
      redis,
      'deadLetters',
      connectTimeoutMs,
      dead.map((key) => commandStep(key, 'xrange', key, '-', '+', 'COUNT', count)),
    )
    const entries: [string, string[]][] = []
    for (const outcome of outcomes) {
      if (!outcome.ok) throw outcome.error
      entries.push(...(outcome.value as [string, string[]][]))
    }
    entries.sort(([a], [b]) => compareEntryIds(a, b))
    entries.length = Math.min(entries.length, count)
    return entries.map(([deadId, fields]) => {
      const get = (name: string): string => {
        for (let i = 0; i < fields.length; i += 2)
          if (fields[i] === name) return fields[i + 1] ?? ''
        return ''
      }
      return decodeDeadLetter<B>(codec, {
        deadId,
        aggregate,
        id: get('i'),
        body: get('b'),
        partition: Number(get('p')),
        entryId: get('e'),
        attempts: Number(get('a')),
        error: { name: get('n'), message: get('m') },
        consumerId: get('c'),
        fence: Number(get('f')),
      })
    })
  }

  return Object.freeze({ partitions, send, consume, deadLetters })
}
