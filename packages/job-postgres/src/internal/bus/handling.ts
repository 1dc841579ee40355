import {
  AggregateDispatcher,
  type AggregateId,
  DefaultAggregateSchedulerSupplier,
} from '@vega/job-scheduler'
import type { PoolClient } from 'pg'
import type { Delivery } from '../../bus-types.js'
import { Acker, type AckVerdict } from './acker.js'
import type { ConsumerConfig } from './config.js'
import { bounded, pause } from './io.js'
import type { Membership } from './membership.js'
import type { OwnedPartition } from './partition.js'
import type { ReadMessage } from './store.js'

/** What the local dispatcher routes: one message of an owned partition. */
interface BusExchange {
  readonly aggregateId: AggregateId
  readonly partition: OwnedPartition
  readonly message: ReadMessage
}

/** The handler as the consumer calls it: with `tx` when it consumes in transactions. */
export type AnyHandler = (
  delivery: Delivery<unknown> & { tx?: PoolClient },
  signal: AbortSignal,
) => unknown

/** How one attempt ended. */
type Attempt =
  | { readonly kind: 'handled'; readonly verdict: AckVerdict }
  | { readonly kind: 'failed'; readonly error: unknown }

/**
 * A consumer's handling: a local `AggregateDispatcher` runs one message at a
 * time per aggregate id, in seq order, `parallelism` at once; each message
 * is handled (retried per the policy, then dead-lettered) and acknowledged,
 * fenced, before the id's next one starts. A handler starts only while its
 * partition's lease surely holds. In transaction mode an attempt is one
 * transaction: the handler's writes through `tx` and the acknowledgement
 * commit together, or roll back together.
 */
export class Handling {
  handled = 0
  retried = 0
  deadLettered = 0
  acksRefused = 0
  private readonly dispatcher: AggregateDispatcher<BusExchange>
  private readonly supplier: DefaultAggregateSchedulerSupplier
  private readonly acker: Acker

  constructor(
    private readonly config: ConsumerConfig,
    private readonly membership: Membership,
    private readonly handler: AnyHandler,
    /** One message settled (handled, buried, or skipped). */
    private readonly settled: (p: OwnedPartition) => void,
    private readonly report: (error: unknown) => void,
  ) {
    this.acker = new Acker(config.store, config.aggregate, config.id, report)
    this.supplier = new DefaultAggregateSchedulerSupplier(`bus:${config.id}`, config.parallelism)
    this.dispatcher = new AggregateDispatcher<BusExchange>({
      name: `bus:${config.aggregate}:${config.id}`,
      handle: this.handle,
      parallelism: Math.max(1024, config.parallelism * 64),
      schedulerSupplier: this.supplier,
      onError: report,
    })
    this.dispatcher.prepare()
    this.dispatcher.start()
  }

  dispatch(p: OwnedPartition, message: ReadMessage): void {
    const { contextName, aggregateName } = this.config.named
    this.dispatcher.dispatch({
      aggregateId: { contextName, aggregateName, id: message.id },
      partition: p,
      message,
    })
  }

  /** Queued messages are dropped (they stay in the table for the next owner). */
  stop(): void {
    this.dispatcher.forceStop()
    this.supplier.forceStop()
  }

  private readonly handle = async (exchange: BusExchange): Promise<void> => {
    const p = exchange.partition
    try {
      if (!this.membership.mayStart(p)) return
      p.running++
      try {
        await this.deliver(exchange, p)
      } finally {
        p.running--
      }
    } finally {
      p.outstanding--
      if (p.state === 'handover' && p.running === 0) this.membership.giveBack([p])
      this.settled(p)
    }
  }

  private async deliver(exchange: BusExchange, p: OwnedPartition): Promise<void> {
    const { message } = exchange
    let body: unknown
    try {
      body = this.config.codec.decode(message.body)
    } catch (error) {
      // A body that cannot be decoded never will be: no retry.
      await this.bury(message, p, error, message.deliveries + 1)
      return
    }
    const retry = this.config.retry
    let attempt = message.deliveries + 1
    for (;;) {
      const delivery: Delivery<unknown> = {
        aggregate: this.config.aggregate,
        id: message.id,
        body,
        partition: p.index,
        entryId: message.pos,
        attempt,
        fence: p.fence,
        consumerId: this.config.id,
      }
      const outcome = this.config.transaction
        ? await this.attemptInTransaction(delivery, message, p)
        : await this.attempt(delivery, message, p)
      if (outcome.kind === 'handled') {
        if (outcome.verdict === 'acked') this.handled++
        else this.notCounted(p, outcome.verdict)
        return
      }
      // The lease is gone: the next owner delivers it again.
      if (p.lost.signal.aborted) return
      let failure = outcome.error
      let again = attempt < retry.attempts
      if (again) {
        try {
          again = retry.retryIf(failure, attempt) === true
        } catch (error) {
          failure = error
          again = false
        }
      }
      let delay = 0
      if (again) {
        try {
          delay = retry.delay(attempt, failure)
        } catch (error) {
          // A bad delay fails the message, as @vega/job-core fails the task.
          failure = error
          again = false
        }
      }
      if (!again) {
        await this.bury(message, p, failure, attempt)
        return
      }
      this.retried++
      await pause(delay, p.yielding.signal)
      attempt++
      if (!this.membership.mayStart(p)) return
    }
  }

  /** One attempt outside a transaction; acknowledged in a batch once the handler returned. */
  private async attempt(
    delivery: Delivery<unknown>,
    message: ReadMessage,
    p: OwnedPartition,
  ): Promise<Attempt> {
    try {
      await this.handler(delivery, p.lost.signal)
    } catch (error) {
      return { kind: 'failed', error }
    }
    return { kind: 'handled', verdict: await this.acker.ack(p, message.seq) }
  }

  /**
   * One attempt as one transaction: BEGIN, the handler with `tx`, the fenced
   * acknowledgement, COMMIT. A handler that throws, an acknowledgement
   * refused, a lost lease: ROLLBACK, and the handler's writes go with it.
   * The server ends the transaction when it sits idle for a lease (a paused
   * or cut-off process), so its locks never hold the next owner up for long.
   */
  private async attemptInTransaction(
    delivery: Delivery<unknown>,
    message: ReadMessage,
    p: OwnedPartition,
  ): Promise<Attempt> {
    const { store, connectTimeoutMs, leaseMs, aggregate, id } = this.config
    let tx: PoolClient
    try {
      tx = await bounded(
        'transaction',
        connectTimeoutMs,
        () => store.pool.connect(),
        (late) => late.release(),
      )
    } catch (error) {
      this.report(error)
      return { kind: 'handled', verdict: 'unconfirmed' }
    }
    // A connection that breaks while checked out must not crash the process.
    let broken: unknown
    const onError = (error: unknown) => {
      broken = error
    }
    tx.on('error', onError)
    let open = false
    try {
      await bounded('transaction', connectTimeoutMs, () =>
        tx.query(`BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${Math.max(1, leaseMs)}`),
      )
      open = true
      try {
        await this.handler({ ...delivery, tx }, p.lost.signal)
      } catch (error) {
        return { kind: 'failed', error }
      }
      if (p.lost.signal.aborted) return { kind: 'handled', verdict: 'refused' }
      const mine = await store.ackInTransaction(tx, aggregate, id, p, message.seq)
      if (!mine) return { kind: 'handled', verdict: 'refused' }
      await bounded('commit', connectTimeoutMs, () => tx.query('COMMIT'))
      open = false
      return { kind: 'handled', verdict: 'acked' }
    } catch (error) {
      broken ??= error
      this.report(error)
      return { kind: 'handled', verdict: 'unconfirmed' }
    } finally {
      if (open && broken === undefined) {
        await bounded('rollback', connectTimeoutMs, () => tx.query('ROLLBACK')).catch(
          (error: unknown) => {
            broken = error
          },
        )
      }
      tx.off('error', onError)
      // A connection in an unknown state is closed, not handed back to the pool.
      tx.release(broken instanceof Error ? broken : broken === undefined ? undefined : true)
    }
  }

  /** Moves the message to the dead letters (fenced like an ack); the id's next messages go on. */
  private async bury(
    message: ReadMessage,
    p: OwnedPartition,
    error: unknown,
    attempts: number,
  ): Promise<void> {
    const name = error instanceof Error ? error.name : typeof error
    const text = error instanceof Error ? error.message : String(error)
    const { store, aggregate, id } = this.config
    let moved: boolean
    try {
      moved = await store.bury(aggregate, id, p, message.seq, attempts, { name, message: text })
    } catch (failure) {
      this.report(failure)
      this.notCounted(p, 'unconfirmed')
      return
    }
    if (moved) this.deadLettered++
    else this.notCounted(p, 'refused')
  }

  /**
   * An ack or dead-letter move that did not count: the database refused it
   * (a newer owner holds the partition, or its lease ran out), or it could
   * not be confirmed. Either way the partition is given up; its next owner
   * delivers the message again.
   */
  private notCounted(p: OwnedPartition, verdict: 'refused' | 'unconfirmed'): void {
    if (verdict === 'refused') {
      this.acksRefused++
      this.membership.lose(p, 'the database refused its acknowledgement (a newer owner holds it)')
    } else {
      this.membership.lose(p, 'its acknowledgement could not be confirmed')
    }
  }
}
