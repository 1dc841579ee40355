import {
  type Attributes,
  context,
  type Link,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api'
import { assertKnownKeys } from '@vega/job-core'
import { describeValue, errorMessage, errorType, exceptionAttributes } from './internal/errors.js'
import { SCOPE } from './internal/names.js'
import { fromCarrier, type TraceCarrier, toCarrier } from './internal/trace-context.js'
import { VERSION } from './version.js'

const WHERE = 'traceAggregateBus(bus, options)'

/** The key under which a traced message's body carries its trace context. */
const TRACE_KEY = 'vega.trace'

/**
 * What a traced bus sends as a message's body: the trace context of its
 * `send` span next to the application's body.
 */
interface TracedBody {
  readonly [TRACE_KEY]: TraceCarrier | Record<string, never>
  readonly body: unknown
}

/**
 * A delivery as {@link AggregateBusLike} hands it to a handler (the shape of
 * `@vega/job-redis`'s and `@vega/job-postgres`'s `Delivery`; a transactional
 * Postgres delivery's `tx` is handed on as it is).
 *
 * @example
 * ```ts
 * const delivery: AggregateDelivery = {
 *   aggregate: 'sales.Order', id: 'order-7', body: { type: 'pay' }, partition: 3, entryId: '1-0', attempt: 1,
 * }
 * ```
 */
export interface AggregateDelivery {
  readonly aggregate: string
  readonly id: string
  readonly body: unknown
  readonly partition: number
  readonly entryId: string
  readonly attempt: number
}

/**
 * The part of an aggregate bus {@link traceAggregateBus} wraps: the shape of
 * `@vega/job-redis`'s `RedisAggregateBus` and `@vega/job-postgres`'s
 * `PostgresAggregateBus`, so this package needs no dependency on either.
 *
 * @example
 * ```ts
 * const bus: AggregateBusLike = createRedisAggregateBus({ redis, prefix: 'vj', partitions: 64, leaseMs: 10_000 })
 * ```
 */
export interface AggregateBusLike {
  /** `messaging.system` of its spans: `'postgresql'` for the Postgres bus; `'redis'` when absent. */
  readonly system?: string
  /** `options` (the Postgres bus's `{ client }`) are passed on as they are. */
  send(
    message: {
      readonly aggregate: string
      readonly id: string
      readonly body: unknown
    },
    options?: never,
  ): Promise<{ readonly partition: number; readonly entryId: string }>
  consume(
    aggregate: string,
    handler: (delivery: AggregateDelivery, signal: AbortSignal) => unknown,
    options?: never,
  ): unknown
  deadLetters?(aggregate: string, count?: number): Promise<readonly { readonly body: unknown }[]>
}

/**
 * Options of {@link traceAggregateBus}.
 *
 * @example
 * ```ts
 * const options: TraceAggregateBusOptions = { tracer: trace.getTracer('orders'), crossProcess: 'link' }
 * ```
 */
export interface TraceAggregateBusOptions {
  /** Default `trace.getTracer('@vega/job-otel', VERSION)`. */
  tracer?: Tracer | undefined
  /**
   * How a `process` span relates to the `send` span of its message:
   * `'link'` (the default) starts a new trace that links to it, so a busy
   * aggregate never grows one endless trace; `'parent'` makes it a child.
   */
  crossProcess?: 'link' | 'parent' | undefined
}

/**
 * Traces an aggregate bus across processes with W3C Trace Context: `send`
 * runs in a PRODUCER span `send {aggregate}` whose context travels in the
 * message, and every handler call runs in a CONSUMER span
 * `process {aggregate}` that **links** to it (or, with `crossProcess:
 * 'parent'`, is its child), active while the handler runs. A handler that
 * throws makes its span ERROR with one `exception` event; each delivery
 * attempt gets its own span.
 *
 * Returns a bus with the same methods. Wrap the bus on **every** producer and
 * consumer of an aggregate: the trace context travels inside the message's
 * body (`{ 'vega.trace': { traceparent, tracestate }, body }`, which the
 * bus's codec encodes), and the traced consumer hands the handler the
 * original body. A traced consumer also takes untraced messages (a `process`
 * span without a link). `deadLetters` returns the original bodies. On the
 * Postgres bus, `send(message, { client })` is traced the same way (the
 * span ends when the row is written; the message, and its context, exist
 * once the caller's transaction commits) and a transactional delivery keeps
 * its `tx`; the spans say `messaging.system: 'postgresql'`.
 * Throws `TypeError` for a bus that is not one, a bad `tracer`,
 * `crossProcess` other than `'link'` / `'parent'`, or an unknown option.
 *
 * @example
 * ```ts
 * import { createRedisAggregateBus } from '@vega/job-redis'
 * import { traceAggregateBus } from '@vega/job-otel'
 *
 * const bus = traceAggregateBus(createRedisAggregateBus({ redis, prefix: 'vj', partitions: 64, leaseMs: 10_000 }))
 * await bus.send({ aggregate: 'sales.Order', id: 'order-7', body: { type: 'pay' } }) // span 'send sales.Order'
 * bus.consume('sales.Order', async ({ id, body }) => apply(id, body)) // span 'process sales.Order', linked
 * ```
 */
export function traceAggregateBus<T extends AggregateBusLike>(
  bus: T,
  options: TraceAggregateBusOptions = {},
): T {
  assertKnownKeys(WHERE, options, ['tracer', 'crossProcess'])
  if (
    typeof bus !== 'object' ||
    bus === null ||
    typeof bus.send !== 'function' ||
    typeof bus.consume !== 'function'
  ) {
    throw new TypeError(
      `${WHERE}: bus must be an aggregate bus (with send and consume), got ${describeValue(bus)}.`,
    )
  }
  const tracer = options.tracer === undefined ? trace.getTracer(SCOPE, VERSION) : options.tracer
  if (typeof tracer !== 'object' || tracer === null || typeof tracer.startSpan !== 'function') {
    throw new TypeError(
      `${WHERE}: tracer must be an OpenTelemetry Tracer (with startSpan), got ${describeValue(tracer)}.`,
    )
  }
  const crossProcess = options.crossProcess ?? 'link'
  if (crossProcess !== 'link' && crossProcess !== 'parent') {
    throw new TypeError(
      `${WHERE}: crossProcess must be 'link' or 'parent', got ${describeValue(crossProcess)}.`,
    )
  }

  const system = typeof bus.system === 'string' ? bus.system : 'redis'
  const send = (message: Parameters<AggregateBusLike['send']>[0], ...options: [never?]) => {
    // A malformed message is the bus's to reject, with its own words.
    if (typeof message !== 'object' || message === null) return bus.send(message, ...options)
    const span = tracer.startSpan(`send ${message.aggregate}`, {
      kind: SpanKind.PRODUCER,
      attributes: messagingAttributes(system, 'send', message.aggregate, message.id),
    })
    const traced: TracedBody = {
      [TRACE_KEY]: toCarrier(span.spanContext()) ?? {},
      body: message.body,
    }
    let sent: Promise<{ readonly partition: number; readonly entryId: string }>
    try {
      sent = bus.send({ ...message, body: traced }, ...options)
    } catch (error) {
      endFailed(span, error)
      throw error
    }
    return sent.then(
      (receipt) => {
        span.setAttributes({
          'messaging.message.id': receipt.entryId,
          'messaging.destination.partition.id': String(receipt.partition),
        })
        span.end()
        return receipt
      },
      (error: unknown) => {
        endFailed(span, error)
        throw error
      },
    )
  }

  const processDelivery = (
    delivery: AggregateDelivery,
    signal: AbortSignal,
    handler: (delivery: AggregateDelivery, signal: AbortSignal) => unknown,
  ): unknown => {
    const { carried, body } = unwrap(delivery.body)
    const remote = fromCarrier(carried)
    const attributes = {
      ...messagingAttributes(system, 'process', delivery.aggregate, delivery.id),
      'messaging.message.id': delivery.entryId,
      'messaging.destination.partition.id': String(delivery.partition),
      'vega.job.attempt': delivery.attempt,
    }
    let span: Span
    if (remote !== undefined && crossProcess === 'parent') {
      span = tracer.startSpan(
        `process ${delivery.aggregate}`,
        { kind: SpanKind.CONSUMER, attributes },
        trace.setSpanContext(context.active(), remote),
      )
    } else {
      const links: Link[] = remote === undefined ? [] : [{ context: remote }]
      // A new trace per message: a busy aggregate never grows one endless trace.
      span = tracer.startSpan(`process ${delivery.aggregate}`, {
        kind: SpanKind.CONSUMER,
        attributes,
        links,
        root: true,
      })
    }
    let result: unknown
    try {
      result = context.with(trace.setSpan(context.active(), span), () =>
        handler({ ...delivery, body }, signal),
      )
    } catch (error) {
      endFailed(span, error)
      throw error
    }
    return Promise.resolve(result).then(
      (value) => {
        span.end()
        return value
      },
      (error: unknown) => {
        endFailed(span, error)
        throw error
      },
    )
  }

  const consume: AggregateBusLike['consume'] = (aggregate, handler, consumeOptions) => {
    // A handler that is not a function is the bus's to reject.
    if (typeof handler !== 'function') return bus.consume(aggregate, handler, consumeOptions)
    return bus.consume(
      aggregate,
      (delivery, signal) => processDelivery(delivery, signal, handler),
      consumeOptions,
    )
  }

  const traced: Record<string, unknown> = { ...(bus as object), send, consume }
  const deadLetters = bus.deadLetters
  if (typeof deadLetters === 'function') {
    traced.deadLetters = async (aggregate: string, count?: number) => {
      const letters = await deadLetters.call(bus, aggregate, count)
      return letters.map((letter) => ({ ...letter, body: unwrap(letter.body).body }))
    }
  }
  return Object.freeze(traced) as unknown as T
}

function messagingAttributes(
  system: string,
  operation: 'send' | 'process',
  aggregate: string,
  id: string,
): Attributes {
  return {
    'messaging.system': system,
    'messaging.operation.type': operation,
    'messaging.operation.name': operation,
    'messaging.destination.name': aggregate,
    'vega.job.aggregate.id': id,
  }
}

/** A traced body's parts; any other body is passed on as it is, with no trace context. */
function unwrap(value: unknown): { carried: unknown; body: unknown } {
  if (
    typeof value === 'object' &&
    value !== null &&
    Object.hasOwn(value, TRACE_KEY) &&
    Object.hasOwn(value, 'body')
  ) {
    const traced = value as TracedBody
    return { carried: traced[TRACE_KEY], body: traced.body }
  }
  return { carried: undefined, body: value }
}

function endFailed(span: Span, error: unknown): void {
  span.addEvent('exception', exceptionAttributes(error))
  span.setAttribute('error.type', errorType(error))
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) })
  span.end()
}
