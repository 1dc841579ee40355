import {
  AggregateDispatcher,
  type AggregateId,
  DefaultAggregateSchedulerSupplier,
  type NamedAggregate,
} from '@vega/job-scheduler'
import type { AttemptOutcome, BusEngine, BusEntry, BusPartition } from '../../bus/bus-engine.js'
import type { Delivery, DeliveryHandler } from '../../bus/bus-types.js'
import type { Codec } from '../../codec.js'
import type { Membership } from './membership.js'
import { pause } from './pause.js'
import type { ResolvedRetry } from './retry.js'

/** What the local dispatcher routes: one message of an owned partition. */
interface BusExchange<P, E> {
  readonly aggregateId: AggregateId
  readonly partition: P
  readonly entry: E
}

/** What handling needs to know of its consumer. */
export interface HandlingConfig {
  readonly aggregate: string
  readonly named: NamedAggregate
  readonly id: string
  readonly codec: Codec
  readonly parallelism: number
  readonly retry: ResolvedRetry
}

/**
 * A consumer's handling: a local `AggregateDispatcher` runs one message at a
 * time per aggregate id, in the order read, `parallelism` at once; each
 * message is handled (retried per the policy, then dead-lettered) and
 * acknowledged, fenced, before the id's next one starts. A handler starts
 * only while its partition's lease surely holds.
 */
export class Handling<P extends BusPartition, E extends BusEntry> {
  handled = 0
  retried = 0
  deadLettered = 0
  acksRefused = 0
  /**
   * Set by `stop()` once its deadline passed: the handlers still running are
   * reported abandoned, so what they return is not acknowledged (their lease
   * still holds until the stop releases it, so an ack would count).
   */
  deadlinePassed = false
  private readonly dispatcher: AggregateDispatcher<BusExchange<P, E>>
  private readonly supplier: DefaultAggregateSchedulerSupplier

  constructor(
    private readonly engine: BusEngine<P, E>,
    private readonly config: HandlingConfig,
    private readonly membership: Membership<P>,
    private readonly handler: DeliveryHandler<unknown>,
    /** One message settled (handled, buried, or skipped). */
    private readonly settled: (p: P) => void,
    private readonly report: (error: unknown) => void,
  ) {
    this.supplier = new DefaultAggregateSchedulerSupplier(`bus:${config.id}`, config.parallelism)
    this.dispatcher = new AggregateDispatcher<BusExchange<P, E>>({
      name: `bus:${config.aggregate}:${config.id}`,
      handle: this.handle,
      parallelism: Math.max(1024, config.parallelism * 64),
      schedulerSupplier: this.supplier,
      onError: report,
    })
    this.dispatcher.prepare()
    this.dispatcher.start()
  }

  dispatch(p: P, entry: E): void {
    const { contextName, aggregateName } = this.config.named
    this.dispatcher.dispatch({
      aggregateId: { contextName, aggregateName, id: entry.id },
      partition: p,
      entry,
    })
  }

  /** Queued messages are dropped (they stay stored for the next owner). */
  stop(): void {
    this.dispatcher.forceStop()
    this.supplier.forceStop()
  }

  private readonly handle = async (exchange: BusExchange<P, E>): Promise<void> => {
    const p = exchange.partition
    try {
      if (!this.membership.mayStart(p)) return
      p.running++
      try {
        await this.deliver(exchange.entry, p)
      } finally {
        p.running--
      }
    } finally {
      p.outstanding--
      if (p.state === 'handover' && p.running === 0) this.membership.giveBack([p])
      this.settled(p)
    }
  }

  private async deliver(entry: E, p: P): Promise<void> {
    let body: unknown
    try {
      body = this.config.codec.decode(entry.body)
    } catch (error) {
      // A body that cannot be decoded never will be: no retry.
      await this.bury(entry, p, error, entry.attempt)
      return
    }
    const retry = this.config.retry
    let attempt = entry.attempt
    for (;;) {
      const delivery: Delivery<unknown> = {
        aggregate: this.config.aggregate,
        id: entry.id,
        body,
        partition: p.index,
        entryId: entry.entryId,
        attempt,
        fence: p.fence,
        consumerId: this.config.id,
      }
      const outcome = await this.attempt(delivery, entry, p)
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
        await this.bury(entry, p, failure, attempt)
        return
      }
      this.retried++
      await pause(delay, p.yielding.signal)
      attempt++
      if (!this.membership.mayStart(p)) return
    }
  }

  /** One attempt: the engine's own, or the handler then a batched acknowledgement. */
  private async attempt(delivery: Delivery<unknown>, entry: E, p: P): Promise<AttemptOutcome> {
    if (this.engine.attempt !== undefined) {
      return this.engine.attempt(delivery, entry, p, this.handler)
    }
    try {
      await this.handler(delivery, p.lost.signal)
    } catch (error) {
      return { kind: 'failed', error }
    }
    // Reported abandoned by the stop: not acknowledged; the partition's next owner delivers it again.
    // (After a lost lease the ack is still sent: the storage's fence refuses it.)
    if (this.deadlinePassed) return { kind: 'failed', error: p.lost.signal.reason }
    return { kind: 'handled', verdict: await this.engine.ack(p, entry) }
  }

  /** Moves the message to the dead letters (fenced like an ack); the id's next messages go on. */
  private async bury(entry: E, p: P, error: unknown, attempts: number): Promise<void> {
    const name = error instanceof Error ? error.name : typeof error
    const message = error instanceof Error ? error.message : String(error)
    let moved: boolean
    try {
      moved = await this.engine.bury(p, entry, { name, message }, attempts)
    } catch (failure) {
      this.report(failure)
      this.notCounted(p, 'unconfirmed')
      return
    }
    if (moved) this.deadLettered++
    else this.notCounted(p, 'refused')
  }

  /**
   * An ack or dead-letter move that did not count: the storage refused it
   * (a newer owner holds the partition), or it could not be confirmed.
   * Either way the partition is given up; its next owner delivers the
   * message again.
   */
  private notCounted(p: P, verdict: 'refused' | 'unconfirmed'): void {
    if (verdict === 'refused') {
      this.acksRefused++
      this.membership.lose(p, 'the storage refused its acknowledgement (a newer owner holds it)')
    } else {
      this.membership.lose(p, 'its acknowledgement could not be confirmed')
    }
  }
}
