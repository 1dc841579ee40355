import {
  AggregateDispatcher,
  type AggregateId,
  DefaultAggregateSchedulerSupplier,
} from '@vega/job-scheduler'
import type { DeliveryHandler } from '../../bus-types.js'
import { bounded, pause } from '../bounded.js'
import { Acker } from './acker.js'
import type { ConsumerConfig } from './config.js'
import { GROUP } from './keys.js'
import type { Membership } from './membership.js'
import type { OwnedPartition } from './partition.js'
import type { RawEntry } from './reader.js'
import { busScripts } from './scripts.js'

/** What the local dispatcher routes: one stream entry of an owned partition. */
interface BusExchange {
  readonly aggregateId: AggregateId
  readonly partition: OwnedPartition
  readonly entryId: string
  readonly body: string
  readonly attempt: number
}

function field(fields: readonly string[], name: string): string {
  for (let i = 0; i < fields.length; i += 2) if (fields[i] === name) return fields[i + 1] ?? ''
  return ''
}

/**
 * A consumer's handling: a local `AggregateDispatcher` runs one message at a
 * time per aggregate id, in stream order, `parallelism` at once; each
 * message is handled (retried per the policy, then dead-lettered) and
 * acknowledged, fenced, before the id's next one starts. A handler starts
 * only while its partition's lease surely holds.
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
    private readonly handler: DeliveryHandler<unknown>,
    /** One message settled (handled, buried, or skipped). */
    private readonly settled: (p: OwnedPartition) => void,
    private readonly report: (error: unknown) => void,
  ) {
    this.acker = new Acker(config.redis, config.connectTimeoutMs, report)
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

  dispatch(p: OwnedPartition, [entryId, fields]: RawEntry, attempt: number): void {
    const { contextName, aggregateName } = this.config.named
    this.dispatcher.dispatch({
      aggregateId: { contextName, aggregateName, id: field(fields, 'i') },
      partition: p,
      entryId,
      body: field(fields, 'b'),
      attempt,
    })
  }

  /** Queued messages are dropped (they stay pending in Redis for the next owner). */
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
      if (p.state === 'handover' && p.running === 0) void this.membership.release([p], false)
      this.settled(p)
    }
  }

  private async deliver(exchange: BusExchange, p: OwnedPartition): Promise<void> {
    let body: unknown
    try {
      body = this.config.codec.decode(exchange.body)
    } catch (error) {
      // A body that cannot be decoded never will be: no retry.
      await this.bury(exchange, p, error, exchange.attempt)
      return
    }
    const retry = this.config.retry
    let attempt = exchange.attempt
    for (;;) {
      let failure: { readonly error: unknown } | undefined
      try {
        await this.handler(
          {
            aggregate: this.config.aggregate,
            id: exchange.aggregateId.id,
            body,
            partition: p.index,
            entryId: exchange.entryId,
            attempt,
            fence: p.fence,
            consumerId: this.config.id,
          },
          p.lost.signal,
        )
      } catch (error) {
        failure = { error }
      }
      if (failure === undefined) {
        const verdict = await this.acker.ack(p, exchange.entryId)
        if (verdict === 'acked') this.handled++
        else this.notCounted(p, verdict)
        return
      }
      // The lease is gone: the next owner delivers it again.
      if (p.lost.signal.aborted) return
      let again = attempt < retry.attempts
      if (again) {
        try {
          again = retry.retryIf(failure.error, attempt) === true
        } catch (error) {
          failure = { error }
          again = false
        }
      }
      if (!again) {
        await this.bury(exchange, p, failure.error, attempt)
        return
      }
      this.retried++
      await pause(retry.delay(attempt, failure.error), p.yielding.signal)
      attempt++
      if (!this.membership.mayStart(p)) return
    }
  }

  /** Moves the message to the dead-letter stream (fenced like an ack); the id's next messages go on. */
  private async bury(
    exchange: BusExchange,
    p: OwnedPartition,
    error: unknown,
    attempts: number,
  ): Promise<void> {
    const name = error instanceof Error ? error.name : typeof error
    const message = error instanceof Error ? error.message : String(error)
    const { redis, connectTimeoutMs, id } = this.config
    let moved: unknown
    try {
      moved = await bounded('deadLetter', connectTimeoutMs, () =>
        busScripts.dead.run(
          redis,
          [p.own, p.stream, p.keys.dead],
          [
            p.token,
            GROUP,
            exchange.entryId,
            'i',
            exchange.aggregateId.id,
            'b',
            exchange.body,
            'p',
            p.index,
            'e',
            exchange.entryId,
            'a',
            attempts,
            'n',
            name,
            'm',
            message,
            'c',
            id,
            'f',
            p.fence,
          ],
        ),
      )
    } catch (failure) {
      this.report(failure)
      this.notCounted(p, 'unconfirmed')
      return
    }
    if (moved === 1) this.deadLettered++
    else this.notCounted(p, 'refused')
  }

  /**
   * An ack or dead-letter move that did not count: the server refused it (a
   * newer owner holds the partition), or it could not be confirmed. Either
   * way the partition is given up; its next owner delivers the entry again.
   */
  private notCounted(p: OwnedPartition, verdict: 'refused' | 'unconfirmed'): void {
    if (verdict === 'refused') {
      this.acksRefused++
      this.membership.lose(p, 'the server refused its acknowledgement (a newer owner holds it)')
    } else {
      this.membership.lose(p, 'its acknowledgement could not be confirmed')
    }
  }
}
