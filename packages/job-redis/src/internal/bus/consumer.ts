import {
  AggregateDispatcher,
  type AggregateId,
  DefaultAggregateSchedulerSupplier,
  type NamedAggregate,
} from '@vega/job-scheduler'
import type { Redis } from 'ioredis'
import type {
  AggregateBusConsumer,
  ConsumerStats,
  DeliveryHandler,
  PartitionStats,
  StopOptions,
  StopReport,
} from '../../bus-types.js'
import type { Codec } from '../../codec.js'
import { LeaseLostError } from '../../errors.js'
import { Acker } from './acker.js'
import { bounded, pause } from './bounded.js'
import { type BusKeys, FENCE_TTL_MS, GROUP } from './keys.js'
import { OwnedPartition } from './partition.js'
import type { ResolvedRetry } from './retry.js'
import { busScripts } from './scripts.js'

export interface ConsumerConfig {
  readonly redis: Redis
  readonly keys: BusKeys
  readonly aggregate: string
  readonly named: NamedAggregate
  readonly partitions: number
  readonly leaseMs: number
  readonly connectTimeoutMs: number
  readonly codec: Codec
  readonly parallelism: number
  readonly retry: ResolvedRetry
  readonly onError: (error: unknown) => void
  readonly id: string
}

/** What the local dispatcher routes: one stream entry of an owned partition. */
interface BusExchange {
  readonly aggregateId: AggregateId
  readonly partition: OwnedPartition
  readonly entryId: string
  readonly body: string
  readonly attempt: number
}

type Phase = 'running' | 'stopping' | 'stopped'

/** One entry as XREADGROUP / XAUTOCLAIM return it: id and a flat field/value list. */
type RawEntry = [string, string[]]

function field(fields: readonly string[], name: string): string {
  for (let i = 0; i < fields.length; i += 2) if (fields[i] === name) return fields[i + 1] ?? ''
  return ''
}

/**
 * A consumer: takes its share of the aggregate's partitions under fenced
 * leases (one tick every leaseMs / 3 renews, joins, takes free partitions
 * and learns the quota), reads the partitions it owns into a local
 * `AggregateDispatcher` (one message at a time per id), and acknowledges
 * each message after its handler settled, before the id's next one starts.
 */
export class BusConsumer implements AggregateBusConsumer {
  readonly id: string
  readonly aggregate: string
  private readonly config: ConsumerConfig
  private readonly partitionsById = new Map<number, OwnedPartition>()
  private readonly dispatcher: AggregateDispatcher<BusExchange>
  private readonly supplier: DefaultAggregateSchedulerSupplier
  private readonly acker: Acker
  private readonly blocker: Redis
  private readonly blockMs: number
  private readonly highWater: number
  private readonly timer: NodeJS.Timeout
  private phase: Phase = 'running'
  private live = 0
  private quota = 0
  private outstanding = 0
  private handled = 0
  private retried = 0
  private deadLettered = 0
  private acksRefused = 0
  private leasesLost = 0
  private released = 0
  private ticking = false
  private tickAgain = false
  private ctlTail = '0-0'
  private blockerId: number | undefined
  private blocked = false
  private pokes = 0
  private sleeper: (() => void) | undefined
  private idle: (() => void) | undefined
  private readonly reading: Promise<void>
  private stopping: Promise<StopReport> | undefined

  constructor(
    config: ConsumerConfig,
    private readonly handler: DeliveryHandler<unknown>,
  ) {
    this.config = config
    this.id = config.id
    this.aggregate = config.aggregate
    this.blockMs = Math.max(10, Math.min(1000, Math.floor(config.leaseMs / 3)))
    this.highWater = Math.max(256, config.parallelism * 32)
    this.acker = new Acker(config.redis, (error) => this.report(error))
    this.supplier = new DefaultAggregateSchedulerSupplier(`bus:${this.id}`, config.parallelism)
    this.dispatcher = new AggregateDispatcher<BusExchange>({
      name: `bus:${config.aggregate}:${this.id}`,
      handle: this.handle,
      parallelism: Math.max(1024, config.parallelism * 64),
      schedulerSupplier: this.supplier,
      onError: (error) => this.report(error),
    })
    this.dispatcher.prepare()
    this.dispatcher.start()
    // Blocking reads need a connection of their own.
    this.blocker = config.redis.duplicate()
    this.blocker.on('error', () => {})
    this.blocker.on('ready', () => {
      this.blockerId = undefined
      this.blocker.client('ID').then(
        (id) => {
          this.blockerId = Number(id)
        },
        () => {},
      )
    })
    this.timer = setInterval(
      () => {
        // Even while a renewal hangs on a silent Redis, the local lease clock runs out.
        this.expireLocally()
        void this.tick()
      },
      Math.max(1, Math.floor(config.leaseMs / 3)),
    )
    void this.tick()
    this.reading = this.readLoop()
  }

  owned(): number[] {
    return [...this.partitionsById.keys()].sort((a, b) => a - b)
  }

  stop(options: StopOptions = {}): Promise<StopReport> {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(
        "consumer.stop(options): options must be an object such as { mode: 'drain', deadline: 10_000 }.",
      )
    }
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
    const parts = [...this.partitionsById.values()]
    const { redis, connectTimeoutMs } = this.config
    const replies = await bounded('stats', connectTimeoutMs, async () => {
      const pipeline = redis.pipeline()
      pipeline.time()
      for (const p of parts) {
        pipeline.xlen(p.stream)
        pipeline.xrange(p.stream, '-', '+', 'COUNT', 1)
      }
      return (await pipeline.exec()) ?? []
    })
    const value = (index: number): unknown => {
      const [error, result] = replies[index] ?? [null, null]
      if (error) throw error
      return result
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
    return {
      consumerId: this.id,
      aggregate: this.aggregate,
      live: this.live,
      quota: this.quota,
      partitions,
      lag: partitions.reduce((sum, p) => sum + p.lag, 0),
      inFlight: partitions.reduce((sum, p) => sum + p.inFlight, 0),
      handled: this.handled,
      retried: this.retried,
      deadLettered: this.deadLettered,
      acksRefused: this.acksRefused,
      leasesLost: this.leasesLost,
    }
  }

  /** Errors it recovers from go to onError; after the stop, what is still in flight fails quietly. */
  private report(error: unknown): void {
    if (this.phase !== 'stopped') this.config.onError(error)
  }

  // ── membership, leases and balance ─────────────────────────────────────

  private async tick(): Promise<void> {
    if (this.phase === 'stopped') return
    if (this.ticking) {
      this.tickAgain = true
      return
    }
    this.ticking = true
    try {
      do {
        this.tickAgain = false
        await this.tickOnce()
      } while (this.tickAgain && (this.phase as Phase) !== 'stopped')
    } finally {
      this.ticking = false
    }
  }

  private async tickOnce(): Promise<void> {
    this.expireLocally()
    const { redis, keys, leaseMs, partitions } = this.config
    const held = [...this.partitionsById.values()]
    const want = this.phase === 'running'
    const args: (string | number)[] = [
      this.id,
      leaseMs,
      partitions,
      keys.base,
      FENCE_TTL_MS,
      want ? 1 : 0,
      Math.floor(Math.random() * partitions),
      GROUP,
    ]
    for (const p of held) args.push(p.index, p.token)
    const sentAt = performance.now()
    let reply: [number, number, number[], number[]]
    try {
      reply = (await busScripts.tick.run(redis, [keys.members, keys.ctl], args)) as typeof reply
    } catch (error) {
      this.report(error)
      return
    }
    const [live, quota, renewed, granted] = reply
    held.forEach((p, k) => {
      if (p.state === 'gone') return
      if (renewed[k] === 1) p.validUntil = sentAt + leaseMs
      else this.lose(p, 'its lease ended before it was renewed')
    })
    this.live = live
    this.quota = quota
    for (let k = 0; k < granted.length; k += 2) {
      const p = new OwnedPartition(
        Number(granted[k]),
        Number(granted[k + 1]),
        this.id,
        keys,
        sentAt + leaseMs,
      )
      if (this.phase !== 'running') {
        // Granted by a tick sent before the stop began: given back at once.
        void this.release([p], false)
        continue
      }
      this.partitionsById.set(p.index, p)
    }
    if (granted.length > 0) this.poke()
    if (this.phase === 'running') this.shedExcess()
  }

  /** More than the quota (a consumer joined): hand the least busy partitions over. */
  private shedExcess(): void {
    const active = [...this.partitionsById.values()].filter((p) => p.state === 'active')
    const excess = active.length - this.quota
    if (excess <= 0) return
    active.sort((a, b) => a.running - b.running || b.index - a.index)
    for (const p of active.slice(0, excess)) this.handover(p)
  }

  /** A lease not confirmed within leaseMs (a paused process, a silent Redis) is lost, before any handler starts under it. */
  private expireLocally(): void {
    const now = performance.now()
    for (const p of [...this.partitionsById.values()]) {
      if (now >= p.validUntil) this.lose(p, `no renewal was confirmed within leaseMs`)
    }
  }

  private lose(p: OwnedPartition, why: string): void {
    if (p.state === 'gone') return
    p.state = 'gone'
    if (this.partitionsById.get(p.index) === p) this.partitionsById.delete(p.index)
    this.leasesLost++
    const error = new LeaseLostError(
      `@vega/job-redis bus: consumer ${this.id} lost partition ${p.index} of ${this.aggregate} (fence ${p.fence}): ${why}.`,
      p.own,
      p.fence,
    )
    p.lost.abort(error)
    p.yielding.abort(error)
    this.poke()
    this.checkIdle()
  }

  private handover(p: OwnedPartition): void {
    if (p.state !== 'active') return
    p.state = 'handover'
    p.yielding.abort()
    if (p.running === 0) void this.release([p], false)
  }

  private async release(parts: OwnedPartition[], leaving: boolean): Promise<number> {
    const { redis, keys, connectTimeoutMs } = this.config
    const args: (string | number)[] = [this.id, keys.base, leaving ? 1 : 0, FENCE_TTL_MS]
    for (const p of parts) {
      if (p.state !== 'gone') {
        p.state = 'gone'
        if (this.partitionsById.get(p.index) === p) this.partitionsById.delete(p.index)
        p.yielding.abort()
      }
      args.push(p.index, p.token)
    }
    this.poke()
    this.checkIdle()
    try {
      const count = (await bounded('release', connectTimeoutMs, () =>
        busScripts.release.run(redis, [keys.members, keys.ctl], args),
      )) as number
      this.released += count
      return count
    } catch (error) {
      // Not released: the leases run out on their own within leaseMs.
      this.report(error)
      return 0
    } finally {
      this.checkIdle()
    }
  }

  // ── reading ────────────────────────────────────────────────────────────

  private async readLoop(): Promise<void> {
    while (this.phase === 'running') {
      const parts = [...this.partitionsById.values()].filter((p) => p.state === 'active')
      const claiming = parts.find((p) => p.claiming)
      try {
        if (claiming !== undefined) {
          await this.claim(claiming)
          continue
        }
        if (parts.length === 0) {
          // Nothing to read: wait for the others to join, leave or give partitions back.
          const pokes = this.pokes
          const [last] = await this.config.redis.xrevrange(
            this.config.keys.ctl,
            '+',
            '-',
            'COUNT',
            1,
          )
          this.heard(last?.[0] ?? '0-0')
          if (this.pokes === pokes && this.phase === 'running') await this.waitForEntries([])
          continue
        }
        if (this.outstanding >= this.highWater) {
          await this.sleep()
          continue
        }
        const pokes = this.pokes
        const got = await this.read(parts)
        if (got === 0 && this.pokes === pokes && this.phase === 'running') {
          await this.waitForEntries(parts)
        }
      } catch (error) {
        if (this.phase !== 'running') return
        this.report(error)
        await pause(this.blockMs)
      }
    }
  }

  /** Takes over the partition's pending entries (a previous owner's), in stream order, before any new one. */
  private async claim(p: OwnedPartition): Promise<void> {
    const reply = (await busScripts.claim.run(
      this.config.redis,
      [p.own, p.stream],
      [p.token, GROUP, this.id, p.claimCursor, 256],
    )) as [0] | [1, string, RawEntry[], number[]]
    if (reply[0] === 0) {
      this.lose(p, 'a newer owner holds it')
      return
    }
    const [, next, entries, counts] = reply
    if (p.state === 'active') {
      entries.forEach((entry, k) => {
        this.dispatch(p, entry, Number(counts[k] ?? 1))
      })
    }
    p.claimCursor = next
    if (next === '0-0') p.claiming = false
  }

  private async read(parts: OwnedPartition[]): Promise<number> {
    const keys: string[] = []
    const args: (string | number)[] = [GROUP, this.id, 0]
    const byStream = new Map<string, OwnedPartition>()
    for (const p of parts) {
      keys.push(p.own, p.stream)
      args.push(p.token)
      byStream.set(p.stream, p)
    }
    const room = this.highWater - this.outstanding
    args[2] = Math.max(1, Math.min(512, Math.ceil(room / parts.length)))
    args.push(this.config.keys.ctl)
    const [lost, result, tails, ctlTail] = (await busScripts.read.run(
      this.config.redis,
      keys,
      args,
    )) as [number[], [string, RawEntry[]][] | null, string[], string]
    const kept = parts.filter((_, k) => !lost.includes(k + 1))
    for (const index of lost)
      this.lose(parts[index - 1] as OwnedPartition, 'a newer owner holds it')
    let got = 0
    if (result) {
      for (const [stream, entries] of result) {
        const p = byStream.get(stream)
        // Read after a handover began: left pending for the next owner.
        if (p === undefined || p.state !== 'active') continue
        for (const entry of entries) this.dispatch(p, entry, 1)
        got += entries.length
      }
    } else {
      kept.forEach((p, k) => {
        p.tail = tails[k] ?? p.tail
      })
    }
    this.heard(ctlTail)
    return got
  }

  /** The control stream moved on: someone joined, left or gave partitions back; balance now. */
  private heard(ctlTail: string): void {
    if (ctlTail === this.ctlTail) return
    this.ctlTail = ctlTail
    void this.tick()
  }

  /** Blocks on its own connection until an owned partition or the control stream gets an entry, or blockMs passes. */
  private async waitForEntries(parts: OwnedPartition[]): Promise<void> {
    const keys = parts.map((p) => p.stream)
    const ids = parts.map((p) => p.tail)
    keys.push(this.config.keys.ctl)
    ids.push(this.ctlTail)
    this.blocked = true
    try {
      await this.blocker.xread('COUNT', 1, 'BLOCK', this.blockMs, 'STREAMS', ...keys, ...ids)
    } finally {
      this.blocked = false
    }
  }

  private dispatch(p: OwnedPartition, [entryId, fields]: RawEntry, attempt: number): void {
    const { contextName, aggregateName } = this.config.named
    p.outstanding++
    this.outstanding++
    this.dispatcher.dispatch({
      aggregateId: { contextName, aggregateName, id: field(fields, 'i') },
      partition: p,
      entryId,
      body: field(fields, 'b'),
      attempt,
    })
  }

  /** Wakes the read loop: from its idle wait, or out of its blocking read. */
  private poke(): void {
    this.pokes++
    const sleeper = this.sleeper
    this.sleeper = undefined
    sleeper?.()
    if (this.blocked && this.blockerId !== undefined) {
      this.config.redis.client('UNBLOCK', this.blockerId).catch(() => {})
    }
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.blockMs)
      function done() {
        clearTimeout(timer)
        resolve()
      }
      this.sleeper = done
    })
  }

  // ── handling ───────────────────────────────────────────────────────────

  private mayStart(p: OwnedPartition): boolean {
    if (p.state !== 'active') return false
    if (performance.now() >= p.validUntil) {
      this.lose(p, 'no renewal was confirmed within leaseMs')
      return false
    }
    return true
  }

  private readonly handle = async (exchange: BusExchange): Promise<void> => {
    const p = exchange.partition
    try {
      if (!this.mayStart(p)) return
      p.running++
      try {
        await this.deliver(exchange, p)
      } finally {
        p.running--
      }
    } finally {
      p.outstanding--
      this.outstanding--
      if (p.state === 'handover' && p.running === 0) void this.release([p], false)
      if (this.outstanding <= this.highWater / 2) this.poke()
      this.checkIdle()
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
            aggregate: this.aggregate,
            id: exchange.aggregateId.id,
            body,
            partition: p.index,
            entryId: exchange.entryId,
            attempt,
            fence: p.fence,
            consumerId: this.id,
          },
          p.lost.signal,
        )
      } catch (error) {
        failure = { error }
      }
      if (failure === undefined) {
        if (await this.acker.ack(p, exchange.entryId)) this.handled++
        else this.refused(p)
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
      if (!this.mayStart(p)) return
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
    let moved: unknown
    try {
      moved = await busScripts.dead.run(
        this.config.redis,
        [p.own, p.stream, this.config.keys.dead],
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
          this.id,
          'f',
          p.fence,
        ],
      )
    } catch (failure) {
      this.report(failure)
      moved = 0
    }
    if (moved === 1) this.deadLettered++
    else this.refused(p)
  }

  private refused(p: OwnedPartition): void {
    this.acksRefused++
    this.lose(p, 'the server refused its acknowledgement (a newer owner holds it)')
  }

  // ── stopping ───────────────────────────────────────────────────────────

  private checkIdle(): void {
    this.idle?.()
  }

  private whenIdle(mode: 'drain' | 'handover', deadline: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (timedOut: boolean) => {
        clearTimeout(timer)
        this.idle = undefined
        resolve(timedOut)
      }
      const timer = setTimeout(() => done(true), deadline)
      this.idle = () => {
        const settled =
          mode === 'drain'
            ? this.outstanding === 0
            : ![...this.partitionsById.values()].some(
                (p) => p.running > 0 || p.state === 'handover',
              )
        if (settled) done(false)
      }
      this.idle()
    })
  }

  private async runStop(mode: 'drain' | 'handover', deadline: number): Promise<StopReport> {
    this.phase = 'stopping'
    this.poke()
    if (mode === 'handover') for (const p of [...this.partitionsById.values()]) this.handover(p)
    // Leave the member set now: the others' quota grows before our partitions come free.
    void this.tick()
    const timedOut = await this.whenIdle(mode, deadline)
    let abandoned = 0
    const all = [...this.partitionsById.values()]
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
    await this.release(all, true)
    this.phase = 'stopped'
    clearInterval(this.timer)
    this.poke()
    this.dispatcher.forceStop()
    this.supplier.forceStop()
    // Out of a blocking read at once; a read stuck on a silent Redis is not waited for past connectTimeoutMs.
    this.blocker.disconnect()
    await Promise.race([this.reading, pause(this.config.connectTimeoutMs)])
    return { mode, released: this.released, abandoned, handled: this.handled }
  }
}
