import {
  type AckVerdict,
  type AttemptOutcome,
  type BusConsumerConfig,
  type BusEngine,
  type BusReader,
  type BusReaderContext,
  type BusWakeHooks,
  type BusWakeups,
  type Delivery,
  type DeliveryHandler,
  LeaseLostError,
  type LeaseTick,
} from '@vega/job-distributed'
import type { PoolClient } from 'pg'
import { io } from '../io.js'
import { Acker } from './acker.js'
import type { BusListener } from './listener.js'
import { type PostgresEntry, PostgresPartition } from './partition.js'
import { Reader } from './reader.js'
import type { PostgresBusStore } from './store.js'

/** What one consumer's engine is made with: its config, and its storage and wake-ups. */
export interface PostgresConsumerSettings extends BusConsumerConfig {
  readonly store: PostgresBusStore
  readonly listener: BusListener
  /** Each attempt runs in a transaction that also acknowledges it. */
  readonly transaction: boolean
}

/**
 * One consumer's storage on Postgres, for `@vega/job-distributed`'s
 * engine-neutral consumer: its leases (`bus_lease`, `bus_member`), its
 * reading, wake-ups (the bus's LISTEN connection), batched fenced
 * acknowledgements, dead letters, and, in transaction mode, the attempt as
 * one transaction.
 */
export class PostgresBusEngine implements BusEngine<PostgresPartition, PostgresEntry> {
  readonly name: string = '@vega/job-postgres'
  readonly attempt: BusEngine<PostgresPartition, PostgresEntry>['attempt']
  private readonly acker: Acker
  /** The lease rows of every partition exist before the first tick. */
  private readonly leasesReady: Promise<void>

  constructor(private readonly settings: PostgresConsumerSettings) {
    const { store, aggregate, id, partitions, onError: report } = settings
    this.acker = new Acker(store, aggregate, id, report)
    this.leasesReady = store.ensureLeases(aggregate, partitions).catch((error: unknown) => {
      report(error)
    })
    this.attempt = settings.transaction ? this.attemptInTransaction : undefined
  }

  async tick(
    held: readonly PostgresPartition[],
    want: boolean,
    probing: boolean,
  ): Promise<LeaseTick> {
    await this.leasesReady
    const { store, aggregate, id, leaseMs, partitions } = this.settings
    const reply = await store.tick(aggregate, id, want, leaseMs, held, probing, partitions)
    return {
      live: reply.live,
      renewed: held.map((p) => reply.renewed.has(p.index)),
      free: reply.free,
    }
  }

  async grant(
    chosen: readonly number[],
    late: (granted: PostgresPartition[]) => void,
  ): Promise<PostgresPartition[]> {
    const { store, aggregate, id, leaseMs } = this.settings
    const made = (granted: { index: number; fence: number }[]) =>
      granted.map(({ index, fence }) => new PostgresPartition(index, fence))
    return made(await store.grant(aggregate, id, leaseMs, chosen, (granted) => late(made(granted))))
  }

  release(parts: readonly PostgresPartition[], leaving: boolean): Promise<number> {
    return this.settings.store.release(this.settings.aggregate, this.settings.id, parts, leaving)
  }

  leaseLost(p: PostgresPartition, message: string): Error {
    return new LeaseLostError(message, `${this.settings.aggregate}:${p.index}`, p.fence)
  }

  startReader(
    context: BusReaderContext<PostgresPartition, PostgresEntry>,
  ): BusReader<PostgresPartition> {
    return new Reader(this.settings, context)
  }

  ack(p: PostgresPartition, entry: PostgresEntry): Promise<AckVerdict> {
    return this.acker.ack(p, entry.seq)
  }

  bury(
    p: PostgresPartition,
    entry: PostgresEntry,
    error: { readonly name: string; readonly message: string },
    attempts: number,
  ): Promise<boolean> {
    const { store, aggregate, id } = this.settings
    return store.bury(aggregate, id, p, entry.seq, attempts, error)
  }

  listen(hooks: BusWakeHooks): BusWakeups<PostgresPartition> {
    const { listener, aggregate, id } = this.settings
    const hearing = {
      aggregate,
      consumerId: id,
      woke: (index: number) => hooks.woke(index),
      membershipChanged: () => hooks.membershipChanged(),
      listening: () => hooks.listening(),
    }
    listener.add(hearing)
    return {
      // One channel for every partition: nothing to follow.
      sync: () => {},
      close: () => listener.remove(hearing),
    }
  }

  async stats(
    parts: readonly PostgresPartition[],
  ): Promise<Map<number, { readonly lag: number; readonly oldestPendingAgeMs: number }>> {
    const found = await this.settings.store.stats(
      this.settings.aggregate,
      parts.map((p) => p.index),
    )
    return new Map(
      [...found].map(([index, { lag, oldestMs }]) => [
        index,
        { lag, oldestPendingAgeMs: oldestMs },
      ]),
    )
  }

  /**
   * One attempt as one transaction: BEGIN, the handler with `tx`, the fenced
   * acknowledgement, COMMIT. A handler that throws, an acknowledgement
   * refused, a lost lease: ROLLBACK, and the handler's writes go with it.
   * The server ends the transaction when it sits idle for a lease (a paused
   * or cut-off process), so its locks never hold the next owner up for long.
   */
  private readonly attemptInTransaction = async (
    delivery: Delivery<unknown>,
    entry: PostgresEntry,
    p: PostgresPartition,
    handler: DeliveryHandler<unknown>,
  ): Promise<AttemptOutcome> => {
    const { store, connectTimeoutMs, leaseMs, aggregate, id, onError: report } = this.settings
    let tx: PoolClient
    try {
      tx = await io.bounded(
        'transaction',
        connectTimeoutMs,
        () => store.pool.connect(),
        (late) => late.release(),
      )
    } catch (error) {
      report(error)
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
      await io.bounded('transaction', connectTimeoutMs, () =>
        tx.query(`BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${Math.max(1, leaseMs)}`),
      )
      open = true
      try {
        await (handler as (d: Delivery<unknown> & { tx: PoolClient }, s: AbortSignal) => unknown)(
          { ...delivery, tx },
          p.lost.signal,
        )
      } catch (error) {
        return { kind: 'failed', error }
      }
      if (p.lost.signal.aborted) return { kind: 'handled', verdict: 'refused' }
      const mine = await store.ackInTransaction(tx, aggregate, id, p, entry.seq)
      if (!mine) return { kind: 'handled', verdict: 'refused' }
      await io.bounded('commit', connectTimeoutMs, () => tx.query('COMMIT'))
      open = false
      return { kind: 'handled', verdict: 'acked' }
    } catch (error) {
      broken ??= error
      report(error)
      return { kind: 'handled', verdict: 'unconfirmed' }
    } finally {
      if (open && broken === undefined) {
        await io
          .bounded('rollback', connectTimeoutMs, () => tx.query('ROLLBACK'))
          .catch((error: unknown) => {
            broken = error
          })
      }
      tx.off('error', onError)
      // A connection in an unknown state is closed, not handed back to the pool.
      tx.release(broken instanceof Error ? broken : broken === undefined ? undefined : true)
    }
  }
}
