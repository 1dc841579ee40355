import { assertKnownKeys } from '@vega/job-core'
import type {
  BusEngine,
  BusEntry,
  BusPartition,
  BusReader,
  BusWakeups,
} from '../../bus/bus-engine.js'
import type {
  AggregateBusConsumer,
  ConsumerStats,
  DeliveryHandler,
  PartitionStats,
  StopOptions,
  StopReport,
} from '../../bus/bus-types.js'
import type { BusConsumerConfig } from '../../bus/create-bus-consumer.js'
import { deferred } from '../../deferred.js'
import { Handling } from './handling.js'
import { Membership } from './membership.js'
import { pause } from './pause.js'

type Phase = 'running' | 'stopping' | 'stopped'

const STOP_OPTIONS = ['mode', 'deadline']

/**
 * A consumer: its {@link Membership} takes its share of the aggregate's
 * partitions under fenced leases, its engine's reader reads the partitions
 * it owns, its {@link Handling} runs one message at a time per id and
 * acknowledges each after its handler settled. This class ties them
 * together, reports stats, and stops them.
 */
export class BusConsumer<P extends BusPartition, E extends BusEntry>
  implements AggregateBusConsumer
{
  readonly id: string
  readonly aggregate: string
  private readonly membership: Membership<P>
  private readonly reader: BusReader<P>
  private readonly handling: Handling<P, E>
  private readonly wakeups: BusWakeups<P>
  private phase: Phase = 'running'
  private idle: (() => void) | undefined
  private stopping: Promise<StopReport> | undefined

  constructor(
    private readonly engine: BusEngine<P, E>,
    private readonly config: BusConsumerConfig,
    handler: DeliveryHandler<unknown>,
  ) {
    this.id = config.id
    this.aggregate = config.aggregate
    const report = (error: unknown) => this.report(error)
    this.membership = new Membership(engine as BusEngine<P, BusEntry>, config, {
      wantsPartitions: () => this.phase === 'running',
      changed: () => {
        this.wakeups?.sync(this.membership.owned())
        this.reader?.poke()
        this.checkIdle()
      },
      ticked: () => this.wakeups?.sync(this.membership.owned()),
      report,
    })
    this.handling = new Handling(
      engine,
      config,
      this.membership,
      handler,
      () => {
        this.reader.settled()
        this.checkIdle()
      },
      report,
    )
    this.reader = engine.startReader({
      owned: () => this.membership.owned(),
      lose: (p, why) => this.membership.lose(p, why),
      dispatch: (p, entry) => this.handling.dispatch(p, entry),
      report,
    })
    this.wakeups = engine.listen({
      membershipChanged: () => void this.membership.tick(),
      woke: (index) => {
        const p = this.membership.partitionsById.get(index)
        if (p !== undefined) this.reader.woke(p)
      },
      listening: () => {
        for (const p of this.membership.owned()) this.reader.woke(p)
      },
    })
    void this.membership.tick()
  }

  owned(): number[] {
    return [...this.membership.partitionsById.keys()].sort((a, b) => a - b)
  }

  stop(options: StopOptions = {}): Promise<StopReport> {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(
        "consumer.stop(options): options must be an object such as { mode: 'drain', deadline: 10_000 }.",
      )
    }
    assertKnownKeys('consumer.stop(options)', options, STOP_OPTIONS)
    const mode = options.mode ?? 'drain'
    if (mode !== 'drain' && mode !== 'handover') {
      throw new TypeError(
        `consumer.stop({ mode }): mode must be 'drain' or 'handover', got ${JSON.stringify(mode)}.`,
      )
    }
    const deadline = options.deadline ?? 30_000
    if (typeof deadline !== 'number' || !Number.isFinite(deadline) || deadline < 0) {
      throw new RangeError(
        `consumer.stop({ deadline }): deadline must be a finite number of ms ≥ 0, got ${String(deadline)}.`,
      )
    }
    this.stopping ??= this.runStop(mode, deadline)
    return this.stopping
  }

  async stats(): Promise<ConsumerStats> {
    const parts = this.membership.owned()
    const byIndex = await this.engine.stats(parts)
    const partitions: PartitionStats[] = parts.map((p) => {
      const found = byIndex.get(p.index)
      return {
        partition: p.index,
        fence: p.fence,
        lag: found?.lag ?? 0,
        inFlight: p.outstanding,
        oldestPendingAgeMs: Math.max(0, found?.oldestPendingAgeMs ?? 0),
      }
    })
    partitions.sort((a, b) => a.partition - b.partition)
    const { handled, retried, deadLettered, acksRefused } = this.handling
    return {
      consumerId: this.id,
      aggregate: this.aggregate,
      live: this.membership.live,
      quota: this.membership.quota,
      partitions,
      lag: partitions.reduce((sum, p) => sum + p.lag, 0),
      inFlight: partitions.reduce((sum, p) => sum + p.inFlight, 0),
      handled,
      retried,
      deadLettered,
      acksRefused,
      leasesLost: this.membership.leasesLost,
    }
  }

  /** Errors it recovers from go to onError; after the stop, what is still in flight fails quietly. */
  private report(error: unknown): void {
    if (this.phase !== 'stopped') this.config.onError(error)
  }

  private checkIdle(): void {
    this.idle?.()
  }

  /** Resolves `true` when the deadline passed first, `false` once the stop's mode has nothing left to wait for. */
  private whenIdle(mode: 'drain' | 'handover', deadline: number): Promise<boolean> {
    const timedOut = deferred<boolean>()
    const done = (passed: boolean) => {
      clearTimeout(timer)
      this.idle = undefined
      timedOut.resolve(passed)
    }
    const timer = setTimeout(() => done(true), deadline)
    this.idle = () => {
      const settled =
        mode === 'drain'
          ? this.reader.outstanding === 0
          : !this.membership.owned().some((p) => p.running > 0 || p.state === 'handover')
      if (settled) done(false)
    }
    this.idle()
    return timedOut.promise
  }

  private async runStop(mode: 'drain' | 'handover', deadline: number): Promise<StopReport> {
    this.phase = 'stopping'
    this.reader.stop()
    if (mode === 'handover') for (const p of this.membership.owned()) this.membership.handover(p)
    // Leave the members now: the others' quota grows before our partitions come free.
    void this.membership.tick()
    const timedOut = await this.whenIdle(mode, deadline)
    let abandoned = 0
    const all = this.membership.owned()
    if (timedOut) {
      this.handling.deadlinePassed = true
      for (const p of all) {
        abandoned += p.running
        p.lost.abort(
          new Error(
            `${this.engine.name} bus: consumer ${this.id} stopped; its ${deadline} ms deadline passed.`,
          ),
        )
      }
    }
    // No tick after this one: a tick sent before the stop may still be renewing the membership or
    // granting partitions; once it ended (and what it granted was given back), the consumer leaves.
    this.membership.stop()
    await this.membership.settled()
    await this.membership.release(this.membership.owned(), true)
    this.phase = 'stopped'
    this.handling.stop()
    this.wakeups.close()
    // A read stuck on a silent storage is not waited for past connectTimeoutMs; the wait's timer goes with it.
    const gaveUp = new AbortController()
    await Promise.race([this.reader.finished, pause(this.config.connectTimeoutMs, gaveUp.signal)])
    gaveUp.abort()
    return { mode, released: this.membership.released, abandoned, handled: this.handling.handled }
  }
}
