import { hostname } from 'node:os'
import { assertKnownKeys } from '@vega/job-core'
import { type NamedAggregate, toNamedAggregate } from '@vega/job-scheduler'
import type { Codec } from '../codec.js'
import { isStorageUnavailableError, type StorageUnavailableError } from '../errors.js'
import { BusConsumer } from '../internal/bus/consumer.js'
import { type ResolvedRetry, resolveRetry } from '../internal/bus/retry.js'
import { checkCodec, describeValue } from '../options.js'
import type { BusEngine, BusEntry, BusPartition } from './bus-engine.js'
import type { AggregateBusConsumer, DeliveryHandler } from './bus-types.js'

export type { ResolvedRetry }

/**
 * Everything one consumer is made with, checked by the engine's `consume`.
 *
 * @example
 * ```ts
 * const config: BusConsumerConfig = {
 *   aggregate: 'sales.Order', named: toNamedAggregate('sales.Order'), id: busConsumerId(),
 *   partitions: 64, leaseMs: 10_000, connectTimeoutMs: 5000, codec: jsonCodec,
 *   ...resolveConsumeOptions('bus.consume', {}, []), onError: console.warn,
 * }
 * ```
 */
export interface BusConsumerConfig {
  readonly aggregate: string
  readonly named: NamedAggregate
  /** Unique per consumer ({@link busConsumerId}). */
  readonly id: string
  readonly partitions: number
  readonly leaseMs: number
  readonly connectTimeoutMs: number
  readonly codec: Codec
  readonly parallelism: number
  readonly retry: ResolvedRetry
  /** Errors the consumer recovers from. */
  readonly onError: (error: unknown) => void
}

/**
 * Starts one consumer of the aggregate bus on a storage engine: membership
 * and balancing, per-id order through a local `AggregateDispatcher`,
 * retries and dead letters, stats, and the stop, all engine-neutral; the
 * engine brings its leases, reading, wake-ups and acknowledgements.
 *
 * @example
 * ```ts
 * const consumer = createBusConsumer(engine, config, async ({ id, body }) => apply(id, body))
 * await consumer.stop({ mode: 'drain' })
 * ```
 */
export function createBusConsumer<P extends BusPartition, E extends BusEntry>(
  engine: BusEngine<P, E>,
  config: BusConsumerConfig,
  handler: DeliveryHandler<unknown>,
): AggregateBusConsumer {
  return new BusConsumer(engine, config, handler)
}

/**
 * A `consume` call's arguments checked (the aggregate, the handler, the
 * common options and the engine's own `known` ones) and made into the
 * consumer's config, with a new consumer id and a throttled warning
 * ({@link busWarning}) for the errors it recovers from.
 *
 * @example
 * ```ts
 * const config = prepareBusConsumer('bus.consume(aggregate, handler, options)', aggregate, handler, options, {
 *   engine: '@vega/job-postgres', known: ['transaction'], partitions, leaseMs, connectTimeoutMs, codec,
 * })
 * ```
 */
export function prepareBusConsumer(
  where: string,
  aggregate: unknown,
  handler: unknown,
  options: unknown,
  bus: {
    readonly engine: string
    readonly known: readonly string[]
    readonly partitions: number
    readonly leaseMs: number
    readonly connectTimeoutMs: number
    readonly codec: Codec
  },
): BusConsumerConfig {
  const named = checkBusAggregate(where, aggregate)
  if (typeof handler !== 'function') {
    throw new TypeError(
      `${where}: handler must be a function (delivery, signal) => …, got ${describeValue(handler)}.`,
    )
  }
  const { parallelism, retry } = resolveConsumeOptions(where, options, bus.known)
  const id = busConsumerId()
  return {
    aggregate: named,
    named: toNamedAggregate(named),
    id,
    partitions: bus.partitions,
    leaseMs: bus.leaseMs,
    connectTimeoutMs: bus.connectTimeoutMs,
    codec: bus.codec,
    parallelism,
    retry,
    onError: busWarning(bus.engine, bus.leaseMs, id),
  }
}

let consumers = 0

/**
 * A consumer id unique across processes: `<host>:<pid>:<n><random>`.
 *
 * @example
 * ```ts
 * const id = busConsumerId() // 'web-1:4242:1k3x9'
 * ```
 */
export function busConsumerId(): string {
  return `${hostname()}:${process.pid}:${++consumers}${Math.random().toString(36).slice(2, 6)}`
}

/**
 * Checks an integer option, naming it and the value.
 *
 * @example
 * ```ts
 * const partitions = checkBusInteger('createPostgresAggregateBus(options)', 'partitions', 64, 1, 16_384)
 * ```
 */
export function checkBusInteger(
  where: string,
  name: string,
  value: unknown,
  min: number,
  max: number,
): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(
      `${where}: ${name} must be an integer from ${min} to ${max}, got ${describeValue(value)}.`,
    )
  }
  return value
}

/**
 * A named aggregate "context.Aggregate", checked where the user passed it.
 *
 * @example
 * ```ts
 * checkBusAggregate('bus.send(message)', 'sales.Order')
 * ```
 */
export function checkBusAggregate(where: string, aggregate: unknown): string {
  if (typeof aggregate !== 'string' || /\s/.test(aggregate)) {
    throw new TypeError(
      `${where}: aggregate must be a "context.Aggregate" string such as 'sales.Order', got ${describeValue(aggregate)}.`,
    )
  }
  try {
    toNamedAggregate(aggregate)
  } catch {
    throw new TypeError(
      `${where}: aggregate must be a "context.Aggregate" string such as 'sales.Order' (one dot, both parts non-empty), got ${describeValue(aggregate)}.`,
    )
  }
  return aggregate
}

/**
 * A message `send` takes: its aggregate and id checked, its body encoded.
 * Throws `TypeError` naming what is wrong.
 *
 * @example
 * ```ts
 * const { aggregate, id, text } = checkBusMessage('bus.send(message)', message, jsonCodec)
 * ```
 */
export function checkBusMessage(
  where: string,
  message: unknown,
  codec: Codec,
): { aggregate: string; id: string; text: string } {
  if (message === null || typeof message !== 'object') {
    throw new TypeError(
      `${where}: message must be an object such as { aggregate: 'sales.Order', id: 'order-7', body }.`,
    )
  }
  const {
    aggregate: given,
    id,
    body,
  } = message as { aggregate?: unknown; id?: unknown; body?: unknown }
  const aggregate = checkBusAggregate(where, given)
  if (typeof id !== 'string' || id === '') {
    throw new TypeError(
      `${where}: id must be a non-empty string (the aggregate id), got ${describeValue(id)}.`,
    )
  }
  try {
    return { aggregate, id, text: codec.encode(body) }
  } catch (error) {
    throw new TypeError(
      `${where}: the body of ${aggregate} ${id} cannot be encoded by the bus's codec: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    )
  }
}

/** The most partitions per aggregate. */
const MAX_PARTITIONS = 16_384

/**
 * The options every engine's bus takes — `partitions`, `leaseMs`, `codec`,
 * `connectTimeoutMs` — checked (naming the option and the value) and
 * resolved: strict JSON by default, and `connectTimeoutMs` min(leaseMs, 5000).
 *
 * @example
 * ```ts
 * const { partitions, leaseMs, codec, connectTimeoutMs } = resolveBusOptions('createPostgresAggregateBus(options)', options)
 * ```
 */
export function resolveBusOptions(
  where: string,
  options: {
    readonly partitions?: unknown
    readonly leaseMs?: unknown
    readonly codec?: unknown
    readonly connectTimeoutMs?: unknown
  },
): { partitions: number; leaseMs: number; codec: Codec; connectTimeoutMs: number } {
  if (options.partitions === undefined) {
    throw new TypeError(
      `${where}: partitions is missing; pass the number of partitions per aggregate (for example 64), the same in every process.`,
    )
  }
  const partitions = checkBusInteger(where, 'partitions', options.partitions, 1, MAX_PARTITIONS)
  if (options.leaseMs === undefined) {
    throw new TypeError(
      `${where}: leaseMs is missing; pass how long a partition lease holds, e.g. 10_000.`,
    )
  }
  const leaseMs = checkBusInteger(where, 'leaseMs (ms)', options.leaseMs, 30, 2 ** 31 - 1)
  const codec = checkCodec(where, options.codec)
  const connectTimeoutMs = checkBusInteger(
    where,
    'connectTimeoutMs (ms)',
    options.connectTimeoutMs ?? Math.min(leaseMs, 5000),
    1,
    2 ** 31 - 1,
  )
  return { partitions, leaseMs, codec, connectTimeoutMs }
}

const RETRY_OPTIONS = ['attempts', 'delay', 'retryIf']

/**
 * `consume`'s common options (`parallelism`, `retry`) checked and resolved;
 * `known` lists the engine's own options besides them.
 *
 * @example
 * ```ts
 * const { parallelism, retry } = resolveConsumeOptions('bus.consume(aggregate, handler, options)', options, ['transaction'])
 * ```
 */
export function resolveConsumeOptions(
  where: string,
  options: unknown,
  known: readonly string[],
): { parallelism: number; retry: ResolvedRetry } {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${where}: options must be an object such as { parallelism: 16 }.`)
  }
  assertKnownKeys(where, options as Record<string, unknown>, ['parallelism', 'retry', ...known])
  const given = options as { parallelism?: unknown; retry?: unknown }
  const parallelism = checkBusInteger(where, 'parallelism', given.parallelism ?? 16, 1, 10_000)
  const retryOption = given.retry ?? 3
  if (typeof retryOption === 'number') {
    return {
      parallelism,
      retry: resolveRetry(
        checkBusInteger(where, 'retry', retryOption, 1, 1_000_000),
        undefined,
        undefined,
      ),
    }
  }
  if (retryOption === null || typeof retryOption !== 'object') {
    throw new TypeError(
      `${where}: retry must be a number of attempts or { attempts, delay?, retryIf? }, got ${describeValue(retryOption)}.`,
    )
  }
  assertKnownKeys(`${where} retry`, retryOption as Record<string, unknown>, RETRY_OPTIONS)
  const policy = retryOption as { attempts?: unknown; delay?: unknown; retryIf?: unknown }
  const attempts = checkBusInteger(where, 'retry.attempts', policy.attempts, 1, 1_000_000)
  const { delay, retryIf } = policy
  if (
    delay !== undefined &&
    typeof delay !== 'function' &&
    (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0)
  ) {
    throw new RangeError(
      `${where}: retry.delay must be a number of ms ≥ 0 or a function (attempt, error) => ms, got ${describeValue(delay)}.`,
    )
  }
  if (retryIf !== undefined && typeof retryIf !== 'function') {
    throw new TypeError(
      `${where}: retry.retryIf must be a function (error, attempt) => boolean, got ${describeValue(retryIf)}.`,
    )
  }
  return {
    parallelism,
    retry: resolveRetry(
      attempts,
      delay as number | ((attempt: number, error: unknown) => number) | undefined,
      retryIf as ((error: unknown, attempt: number) => boolean) | undefined,
    ),
  }
}

/**
 * Warns about errors a consumer recovers from, at most once per lease period
 * per consumer and operation (`tick`, `read`, `ack`, …: the `operation` of
 * a {@link StorageUnavailableError}): a storage that stops answering
 * shows every step it stopped, not only the first.
 *
 * @example
 * ```ts
 * const onError = busWarning('@vega/job-postgres', 10_000, id)
 * ```
 */
export function busWarning(engine: string, leaseMs: number, id: string): (error: unknown) => void {
  const byOperation = new Map<string, { last: number; muted: number }>()
  return (error) => {
    const operation = isStorageUnavailableError(error) ? error.operation : 'other'
    let entry = byOperation.get(operation)
    if (entry === undefined) {
      entry = { last: Number.NEGATIVE_INFINITY, muted: 0 }
      byOperation.set(operation, entry)
    }
    const now = performance.now()
    if (now - entry.last < leaseMs) {
      entry.muted++
      return
    }
    entry.last = now
    const more = entry.muted > 0 ? ` (${entry.muted} more since the last warning)` : ''
    entry.muted = 0
    console.warn(`${engine} bus consumer ${id}: ${String(error)}${more}; it retries.`)
  }
}
