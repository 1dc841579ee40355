import type { Delivery, DeliveryHandler } from './bus-types.js'

/**
 * `active`: owned, its messages are read and handled. `handover`: owned, but
 * giving it back: nothing new starts, and it is released once its running
 * handlers settled. `gone`: lost or released; its queued messages are
 * skipped and stay stored for the next owner.
 *
 * @example
 * ```ts
 * const state: BusPartitionState = 'handover'
 * ```
 */
export type BusPartitionState = 'active' | 'handover' | 'gone'

/**
 * One partition a consumer owns under a fenced lease: the state every engine
 * shares. An engine's grant makes them (a subclass adds what its storage
 * needs: keys, a read cursor).
 *
 * @example
 * ```ts
 * class PostgresPartition extends BusPartition {
 *   after = 0 // the last seq read
 * }
 * ```
 */
export class BusPartition {
  state: BusPartitionState = 'active'
  /**
   * Wake-ups heard (a send) or given by the consumer, and how many of them
   * the last finished read covered: it is read again while they differ.
   */
  wakes = 1
  readUpTo = 0
  /** Local clock (performance.now) until which the lease surely holds: the send time of the last renewal + leaseMs. */
  validUntil = 0
  /** Messages read and not yet settled (queued or running). */
  outstanding = 0
  /** Messages inside the handler (or between its retries) now. */
  running = 0
  /** Aborts the handlers' signal: the lease is lost, or the stop deadline passed. */
  readonly lost: AbortController = new AbortController()
  /** Aborts retry waits when the partition is handed over. */
  readonly yielding: AbortController = new AbortController()

  constructor(
    readonly index: number,
    readonly fence: number,
  ) {}
}

/**
 * One message as an engine read it, ready for a handler.
 *
 * @example
 * ```ts
 * const entry: BusEntry = { id: 'order-7', entryId: '1700000000000-0', body: '{"seq":1}', attempt: 1 }
 * ```
 */
export interface BusEntry {
  /** The aggregate id. */
  readonly id: string
  /** The message's id in the engine (the delivery's `entryId`). */
  readonly entryId: string
  /** The codec's text. */
  readonly body: string
  /** The attempt its first delivery here is: 1, or more when an earlier owner read it. */
  readonly attempt: number
}

/**
 * What one membership round learned from the storage.
 *
 * @example
 * ```ts
 * const tick: LeaseTick = { live: 3, renewed: [true, false], free: [4, 9] }
 * ```
 */
export interface LeaseTick {
  /** Live consumers of the aggregate; undefined when that step failed. */
  readonly live: number | undefined
  /** Per held partition (in the order given): renewed, lost, or undefined (not confirmed: the local lease clock decides). */
  readonly renewed: readonly (boolean | undefined)[]
  /** Free partitions (when probing), ascending. */
  readonly free: readonly number[]
}

/**
 * How an acknowledgement (or a dead-letter move) ended: counted, refused by
 * the storage (another owner holds the partition), or not confirmed (the
 * storage failed or did not answer in time; the message stays for the next owner).
 *
 * @example
 * ```ts
 * const verdict: AckVerdict = 'refused'
 * ```
 */
export type AckVerdict = 'acked' | 'refused' | 'unconfirmed'

/**
 * What a consumer gives its engine's reader: the partitions it owns, and
 * where read messages go.
 *
 * @example
 * ```ts
 * const reader = engine.startReader({ owned: () => [...], lose, dispatch, report })
 * ```
 */
export interface BusReaderContext<P extends BusPartition, E extends BusEntry> {
  /** The partitions owned now. */
  owned(): P[]
  /** The storage says another consumer owns `p` now. */
  lose(p: P, why: string): void
  /** Hands one message of `p` to the handling, in order. */
  dispatch(p: P, entry: E): void
  report(error: unknown): void
}

/**
 * An engine's reading loop, as its consumer drives it.
 *
 * @example
 * ```ts
 * reader.woke(p) // a send's wake-up for partition p
 * ```
 */
export interface BusReader<P extends BusPartition> {
  /** Messages read and not yet settled. */
  readonly outstanding: number
  /** Resolves once the loop ended after {@link stop}. */
  readonly finished: Promise<void>
  stop(): void
  /** One message settled. */
  settled(): void
  /** A send woke `p`: read it again. */
  woke(p: P): void
  /** The owned partitions changed: look again. */
  poke(): void
}

/**
 * How one attempt of a handler ended: it returned and its message was
 * acknowledged (with that verdict), or it threw.
 *
 * @example
 * ```ts
 * const outcome: AttemptOutcome = { kind: 'failed', error: new Error('boom') }
 * ```
 */
export type AttemptOutcome =
  | { readonly kind: 'handled'; readonly verdict: AckVerdict }
  | { readonly kind: 'failed'; readonly error: unknown }

/**
 * What a storage engine gives the aggregate bus's engine-neutral consumer
 * ({@link createBusConsumer}): its leases, its reading and wake-ups, its
 * acknowledgements and dead letters. Every method is bounded by the engine
 * (connectTimeoutMs) and rejects with its unavailable error.
 *
 * @example
 * ```ts
 * const consumer = createBusConsumer(postgresEngine, config, handler)
 * ```
 */
export interface BusEngine<P extends BusPartition, E extends BusEntry> {
  /** The package, for messages: `@vega/job-redis`. */
  readonly name: string
  /** Joins (or leaves, `want` false) the members, renews `held`, and, `probing`, lists free partitions. */
  tick(held: readonly P[], want: boolean, probing: boolean): Promise<LeaseTick>
  /** Takes the free partitions among `chosen` under new fences; `late` gets those granted after the bound. */
  grant(chosen: readonly number[], late: (granted: P[]) => void): Promise<P[]>
  /** Gives partitions back (and, `leaving`, leaves the members), telling the others. → how many were released */
  release(parts: readonly P[], leaving: boolean): Promise<number>
  /** The `LeaseLostError` (the engine's class) that aborts `p`'s handlers, with this message. */
  leaseLost(p: P, message: string): Error
  /** Starts the reading loop. */
  startReader(context: BusReaderContext<P, E>): BusReader<P>
  /** Acknowledges a handled message, fenced. */
  ack(p: P, entry: E): Promise<AckVerdict>
  /** Moves a message to the dead letters, fenced. → moved (false: refused); rejects when not confirmed */
  bury(
    p: P,
    entry: E,
    error: { readonly name: string; readonly message: string },
    attempts: number,
  ): Promise<boolean>
  /**
   * Runs one attempt in the engine's own way (Postgres: inside a transaction
   * that also acknowledges); absent, the consumer calls the handler, then {@link ack}.
   */
  readonly attempt?:
    | ((
        delivery: Delivery<unknown>,
        entry: E,
        p: P,
        handler: DeliveryHandler<unknown>,
      ) => Promise<AttemptOutcome>)
    | undefined
  /** Starts the consumer's wake-ups. */
  listen(hooks: BusWakeHooks): BusWakeups<P>
  /** Per partition: messages not yet handled, and the age of the oldest (server clock). */
  stats(
    parts: readonly P[],
  ): Promise<Map<number, { readonly lag: number; readonly oldestPendingAgeMs: number }>>
}

/**
 * What a consumer does with what its engine's wake-ups hear.
 *
 * @example
 * ```ts
 * const wakeups = engine.listen({ membershipChanged, woke, listening })
 * ```
 */
export interface BusWakeHooks {
  /** Someone else joined, left or gave partitions back: balance now. */
  membershipChanged(): void
  /** A send woke partition `index`. */
  woke(index: number): void
  /** The wake-ups were (re)established: anything sent meanwhile was not heard; read everything once. */
  listening(): void
}

/**
 * A consumer's wake-ups, as its engine runs them.
 *
 * @example
 * ```ts
 * wakeups.sync(owned) // after the owned partitions changed
 * wakeups.close()
 * ```
 */
export interface BusWakeups<P extends BusPartition> {
  /** The owned partitions changed (or a tick ended): listen to theirs. */
  sync(owned: readonly P[]): void
  close(): void
}
