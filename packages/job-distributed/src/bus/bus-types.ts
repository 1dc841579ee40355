// The aggregate bus's types, the same for every engine (@vega/job-redis,
// @vega/job-postgres): an engine re-exports them, and adds its own options.

/**
 * One command or event for an aggregate instance.
 *
 * @example
 * ```ts
 * const message: BusMessage<{ type: 'pay' }> = { aggregate: 'sales.Order', id: 'order-7', body: { type: 'pay' } }
 * ```
 */
export interface BusMessage<B = unknown> {
  /** The named aggregate, `"context.Aggregate"`. */
  readonly aggregate: string
  /** The aggregate id: it chooses the partition, and messages of one id are handled in the order the engine stored them. */
  readonly id: string
  readonly body: B
}

/**
 * Where {@link PostgresAggregateBus.send} put a message.
 *
 * @example
 * ```ts
 * const { partition, entryId } = await bus.send({ aggregate: 'sales.Order', id: 'order-7', body })
 * ```
 */
export interface SendReceipt {
  readonly partition: number
  /** The message's id in the engine (a Redis stream entry id, a Postgres row id), the delivery's `entryId`. */
  readonly entryId: string
}

/**
 * What a handler receives: the message, and how it was delivered.
 *
 * @example
 * ```ts
 * const handle: DeliveryHandler<Command> = async (delivery, signal) => {
 *   if (delivery.attempt > 1) log.info('redelivered', delivery.entryId)
 *   await orders.apply(delivery.id, delivery.body, { fence: delivery.fence, signal })
 * }
 * ```
 */
export interface Delivery<B = unknown> {
  readonly aggregate: string
  readonly id: string
  readonly body: B
  readonly partition: number
  /** The message's id, as the send's receipt gave it. */
  readonly entryId: string
  /**
   * 1 on the first delivery. More when it may have been handled before: a
   * retry after the handler threw, or a redelivery after its consumer died,
   * was fenced out or handed the partition over before acknowledging.
   */
  readonly attempt: number
  /**
   * The partition lease's fencing token: it grows with every new owner of
   * the partition. Store it next to what the handler writes and refuse
   * writes with a smaller one, and a paused consumer's late write never counts.
   */
  readonly fence: number
  /** The consumer handling it. */
  readonly consumerId: string
}

/**
 * Handles one message. Its promise holds the id (the next message of the id
 * waits) until it settles and its acknowledgement is confirmed. The signal
 * aborts with `LeaseLostError` when the partition's lease is lost, or when a
 * stop's deadline passes.
 *
 * @example
 * ```ts
 * const handle: DeliveryHandler = async ({ id, body }, signal) => apply(id, body, signal)
 * ```
 */
export type DeliveryHandler<B = unknown> = (delivery: Delivery<B>, signal: AbortSignal) => unknown

/**
 * How often a handler that throws is tried before its message goes to the
 * dead letters (the shape of `@vega/job-core`'s `RetryPolicy`).
 *
 * @example
 * ```ts
 * const retry: BusRetryPolicy = { attempts: 5, delay: (n) => 50 * n, retryIf: (e) => !(e instanceof TypeError) }
 * ```
 */
export interface BusRetryPolicy {
  /** Total attempts, the first included; an integer ≥ 1. */
  attempts: number
  /**
   * ms before the next attempt: a number, or a function of the failed
   * attempt (1-based) and its error. Default: exponential with full jitter,
   * up to 100, 200, 400 … ms, capped at 30 s. A function that returns a
   * negative, `NaN` or infinite delay sends the message to the dead letters
   * with a `RangeError` (as `@vega/job-core` fails the task).
   */
  delay?: number | ((attempt: number, error: unknown) => number) | undefined
  /** Whether the error is worth another attempt; default every error. */
  retryIf?: ((error: unknown, attempt: number) => boolean) | undefined
}

/**
 * How {@link AggregateBusConsumer.stop} ends: `'drain'` handles every message
 * already read, then releases; `'handover'` lets only the running handlers
 * finish and leaves the rest to the next owners. Past `deadline` ms, running
 * handlers' signals abort and the partitions are released anyway.
 *
 * @example
 * ```ts
 * await consumer.stop({ mode: 'handover', deadline: 5_000 })
 * ```
 */
export interface StopOptions {
  /** Default `'drain'`. */
  mode?: 'drain' | 'handover'
  /** ms; default 30 000. */
  deadline?: number
}

/**
 * What a stop did.
 *
 * @example
 * ```ts
 * const report: StopReport = await consumer.stop()
 * if (report.abandoned > 0) log.warn(`${report.abandoned} handlers outlived the deadline`)
 * ```
 */
export interface StopReport {
  readonly mode: 'drain' | 'handover'
  /** Partitions given back to the other consumers. */
  readonly released: number
  /** Handlers still running when the deadline passed (their signal aborted; their acks will be refused). */
  readonly abandoned: number
  /** Messages this consumer handled and acknowledged in its life. */
  readonly handled: number
}

/**
 * One owned partition in {@link ConsumerStats}.
 *
 * @example
 * ```ts
 * for (const p of stats.partitions) console.log(p.partition, p.lag, p.inFlight, p.oldestPendingAgeMs)
 * ```
 */
export interface PartitionStats {
  readonly partition: number
  readonly fence: number
  /** Messages stored in the partition and not yet handled (acknowledged), in flight included. */
  readonly lag: number
  /** Messages read by this consumer and not yet settled. */
  readonly inFlight: number
  /** Age of the oldest unhandled message, by the server's clock; 0 when none. */
  readonly oldestPendingAgeMs: number
}

/**
 * A snapshot of one consumer.
 *
 * @example
 * ```ts
 * const s = await consumer.stats()
 * console.log(`${s.consumerId}: ${s.partitions.length}/${s.quota} partitions, ${s.live} live, lag ${s.lag}`)
 * ```
 */
export interface ConsumerStats {
  readonly consumerId: string
  readonly aggregate: string
  /** Live consumers of the aggregate, as of the last renewal. */
  readonly live: number
  /** ⌈partitions / live⌉: the most partitions one consumer owns once stable. */
  readonly quota: number
  readonly partitions: readonly PartitionStats[]
  /** The sum of the partitions' lag. */
  readonly lag: number
  /** The sum of the partitions' in-flight counts. */
  readonly inFlight: number
  /** Messages handled and acknowledged in this consumer's life. */
  readonly handled: number
  /** Handler attempts that threw and were tried again. */
  readonly retried: number
  readonly deadLettered: number
  /** Acknowledgements the engine refused because the partition had a new owner (or its lease ran out). */
  readonly acksRefused: number
  /** Partitions lost (lease ended before renewal) in this consumer's life. */
  readonly leasesLost: number
}

/**
 * One consumer of one aggregate, in one process.
 *
 * @example
 * ```ts
 * const consumer = bus.consume('sales.Order', handle)
 * process.on('SIGTERM', () => void consumer.stop({ mode: 'drain', deadline: 10_000 }))
 * ```
 */
export interface AggregateBusConsumer {
  /** Unique per consumer: `<host>:<pid>:<random>`. */
  readonly id: string
  readonly aggregate: string
  /** The partitions it owns now, ascending. */
  owned(): number[]
  stats(): Promise<ConsumerStats>
  /** Stops once: later calls return the first call's promise. Never rejects. */
  stop(options?: StopOptions): Promise<StopReport>
}

/**
 * One dead letter: a message whose handler kept failing.
 *
 * @example
 * ```ts
 * for (const dead of await bus.deadLetters('sales.Order')) console.log(dead.id, dead.error.message)
 * ```
 */
export interface DeadLetter<B = unknown> {
  /** Its id among the dead letters (a bigint as a decimal string). */
  readonly deadId: string
  readonly aggregate: string
  readonly id: string
  readonly body: B
  readonly partition: number
  /** The message's id while it was in the bus. */
  readonly entryId: string
  readonly attempts: number
  readonly error: { readonly name: string; readonly message: string }
  readonly consumerId: string
  readonly fence: number
}
