import { assertKnownKeys } from '@vega/job-core'
import type {
  AggregateBusConsumer,
  ConsumerStats,
  DeliveryHandler,
  PartitionStats,
  StopOptions,
  StopReport,
} from '../../bus-types.js'
import { pause } from '../bounded.js'
import { deferred } from '../deferred.js'
import type { ConsumerConfig } from './config.js'
import { Handling } from './handling.js'
import { Membership } from './membership.js'
import { commandStep, type Outcome, runByNode, type Step } from './nodes.js'
import { type RawEntry, Reader } from './reader.js'
import { Wakeups } from './wakeups.js'

export type { ConsumerConfig } from './config.js'

type Phase = 'running' | 'stopping' | 'stopped'

const STOP_OPTIONS = ['mode', 'deadline']

/**
 * A consumer: its {@link Membership} takes its share of the aggregate's
 * partitions under fenced leases, its {@link Reader} reads the partitions it
 * owns, its {@link Handling} runs one message at a time per id and
 * acknowledges each after its handler settled. This class ties them
 * together, reports stats, and stops them.
 */
export class BusConsumer implements AggregateBusConsumer {
  readonly id: string
  readonly aggregate: string
  private readonly config: ConsumerConfig
  private readonly membership: Membership
  private readonly reader: Reader
  private readonly handling: Handling
  private readonly wakeups: Wakeups
  private phase: Phase = 'running'
  private idle: (() => void) | undefined
  private stopping: Promise<StopReport> | undefined

  constructor(config: ConsumerConfig, handler: DeliveryHandler<unknown>) {
    this.config = config
    this.id = config.id
    this.aggregate = config.aggregate
    const report = (error: unknown) => this.report(error)
    this.membership = new Membership(config, {
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
      config,
      this.membership,
      handler,
      () => {
        this.reader.settled()
        this.checkIdle()
      },
      report,
    )
    this.reader = new Reader(
      config,
      this.membership,
      (p, entry, attempt) => this.handling.dispatch(p, entry, attempt),
      report,
    )
    this.wakeups = new Wakeups(config.redis, config.keys.ctl, config.id, {
      membershipChanged: () => void this.membership.tick(),
      woke: (p) => this.reader.woke(p),
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
    const { redis, connectTimeoutMs } = this.config
    // The server's time once (from the membership's node), each partition's length and oldest entry from its own.
    const steps: Step[] = [commandStep(this.config.keys.members, 'time')]
    for (const p of parts) {
      steps.push(commandStep(p.stream, 'xlen', p.stream))
      steps.push(commandStep(p.stream, 'xrange', p.stream, '-', '+', 'COUNT', 1))
    }
    const replies = await runByNode(redis, 'stats', connectTimeoutMs, steps)
    const value = (index: number): unknown => {
      const outcome = replies[index] as Outcome
      if (!outcome.ok) throw outcome.error
      return outcome.value
    }
    const [seconds, micros] = value(0) as [string, string]
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
    const partitions: PartitionStats[] = parts.map((p, k) => {
      const lag = value(1 + 2 * k) as number
      const oldest = (value(2 + 2 * k) as RawEntry[])[0]
      const oldestMs = oldest === undefined ? now : Number(oldest[0].split('-')[0])
      return {
        partition: p.index,
        fence: p.fence,
        lag,
        inFlight: p.outstanding,
        oldestPendingAgeMs: Math.max(0, now - oldestMs),
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
    // Leave the member set now: the others' quota grows before our partitions come free.
    void this.membership.tick()
    const timedOut = await this.whenIdle(mode, deadline)
    let abandoned = 0
    const all = this.membership.owned()
    if (timedOut) {
      for (const p of all) {
        abandoned += p.running
        p.lost.abort(
          new Error(
            `@vega/job-redis bus: consumer ${this.id} stopped; its ${deadline} ms deadline passed.`,
          ),
        )
      }
    }
    await this.membership.release(all, true)
    this.phase = 'stopped'
    this.membership.stop()
    // A tick sent before the stop may still be granting partitions: they are given back before the stop resolves.
    await this.membership.settled()
    this.handling.stop()
    this.wakeups.close()
    // A read stuck on a silent Redis is not waited for past connectTimeoutMs; the wait's timer goes with it.
    const gaveUp = new AbortController()
    await Promise.race([this.reader.finished, pause(this.config.connectTimeoutMs, gaveUp.signal)])
    gaveUp.abort()
    return { mode, released: this.membership.released, abandoned, handled: this.handling.handled }
  }
}
