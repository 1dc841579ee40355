import { randomBytes } from 'node:crypto'
import type { CoordinationContext } from '@vega/job-coordination'
import type { PluginHost, Task } from '@vega/job-core'
import type { Codec } from '../codec.js'
import type { RedisCoordinationCounters } from '../create-redis-coordination.js'
import type { LeaderContext } from '../leader-context.js'
import { type Deferred, deferred } from './deferred.js'
import type { Lease } from './lease.js'
import type { HandOff, RedisIO } from './redis-io.js'
import { ShardedSubscriber } from './sharded-subscriber.js'
import type { Waiter, WaiterRegistry } from './waiter.js'

export interface Located {
  readonly host: PluginHost
  /** The runtime's own task behind `ctx.intent` (what host.onSettled / onExited take). */
  readonly task: Task<unknown>
}

/** One key's wake-up channel while this process listens to it. */
interface Listening {
  readonly channel: string
  /** Waiters and restart holders of the key that need its messages. */
  wanted: number
  /** Set while nobody wants it: the subscription stays a little, for the key's next waiter. */
  linger: NodeJS.Timeout | undefined
}

/**
 * Everything one `createRedisCoordination` keeps in this process: the runtimes
 * it serves, its waiters and leases (by id, for pub/sub), the subscriber
 * connection and the keys' channels it listens to, and the releases still on
 * the wire (awaited at shutdown).
 */
export class Cluster implements WaiterRegistry {
  readonly byHash: Map<string, Set<Waiter>> = new Map()
  readonly byId: Map<string, Waiter> = new Map()
  readonly leases: Map<string, Lease> = new Map()
  readonly hosts: Set<PluginHost> = new Set()
  /** Ids of this process's holders and waiters start with it (a restart tells local from remote). */
  readonly origin: string = `${randomBytes(4).toString('hex')}-${process.pid}`
  private counter = 0
  private subscriber: ShardedSubscriber | undefined
  /** The keys whose channel this process listens to, by hash; and the hash of each channel. */
  private readonly listening: Map<string, Listening> = new Map()
  private readonly channels: Map<string, string> = new Map()

  constructor(
    readonly io: RedisIO,
    readonly codec: Codec,
    /** The `leaderContext` option: what a dedupe leader carries to its joiners. */
    readonly leaderContext: LeaderContext | undefined = undefined,
  ) {}

  nextId(taskId: number): string {
    return `${this.origin}.${taskId}.${++this.counter}`
  }

  isLocal(id: string): boolean {
    return id.startsWith(`${this.origin}.`)
  }

  /** The host and task behind a coordination context; a TypeError when `cluster.plugin` is missing. */
  locate(ctx: CoordinationContext, who: string): Located {
    // O(runtimes served), not O(live tasks): a busy process has thousands of waiting calls.
    const task = ctx.task
    for (const host of this.hosts) {
      if (host.owns(task)) return { host, task }
    }
    throw new TypeError(
      `${who}: this runtime does not have the cluster's plugin; create it with createRuntime({ plugins: [installCoordination, cluster.plugin] }) using the same createRedisCoordination(…) result.`,
    )
  }

  /** Releases on the wire (each settles within connectTimeoutMs), and who waits for there to be none. */
  private releasing = 0
  private drained: Deferred<void> | undefined

  releaseStarted(): void {
    this.releasing++
  }

  handedOff(handOff: HandOff): void {
    this.byId.get(handOff.id)?.handed(handOff.fence, handOff.server)
  }

  releaseDone(): void {
    if (--this.releasing > 0) return
    const drained = this.drained
    this.drained = undefined
    drained?.resolve()
  }

  /** Resolves once no release is on the wire (shutdown waits for them, so other processes go on at once). */
  idle(): Promise<void> {
    if (this.releasing === 0) return Promise.resolve()
    this.drained ??= deferred()
    return this.drained.promise
  }

  /**
   * Opens the subscriber connection (once). On a cluster it is a duplicate
   * with one sharded subscriber per primary, so a key's channel is heard on
   * the primary that owns the key's slot. It subscribes to nothing until a
   * key is waited on ({@link want}).
   */
  listen(): void {
    if (this.subscriber !== undefined || this.io.redis.status === 'end') return
    this.subscriber = new ShardedSubscriber(this.io.redis, (channel, message) =>
      this.hear(channel, message),
    )
  }

  /**
   * Listens to the key's channel. The key's waiters re-check each time the
   * subscription holds (first, and after a reconnect re-subscribed it): a
   * message sent before it did is not heard, and the re-check finds what it
   * said ({@link recheck}).
   */
  want(hash: string): void {
    const known = this.listening.get(hash)
    if (known !== undefined) {
      known.wanted++
      if (known.linger !== undefined) clearTimeout(known.linger)
      known.linger = undefined
      return
    }
    this.listen()
    const subscriber = this.subscriber
    if (subscriber === undefined) return // the client ended: waiters fail or poll on their floor
    const listening: Listening = { channel: this.io.channel(hash), wanted: 1, linger: undefined }
    this.listening.set(hash, listening)
    this.channels.set(listening.channel, hash)
    const subscribed = () => {
      if (this.listening.get(hash) === listening) this.recheck(hash)
    }
    // Not subscribed: the key's next waiter tries again; until then its waiters poll on their floor.
    const failed = () => this.forget(hash, listening)
    subscriber.subscribe(listening.channel, subscribed, failed)
  }

  /**
   * What the key's waiters may have missed before the subscription held. A
   * serialize line (one slot) only misses a hand-off, which left the key in
   * the lock under a waiter's id: one read for the whole line finds it. Other
   * waiters (at most one per process and key for dedupe and keepLatest, as
   * local peers are decided locally) ask again.
   */
  private recheck(hash: string): void {
    let inLine = false
    for (const waiter of [...(this.byHash.get(hash) ?? [])]) {
      if (waiter.mode === 'queue' && waiter.limit === 1) inLine = true
      else waiter.poll()
    }
    if (!inLine) return
    this.io.holderOf(hash).then(
      (holder) => {
        if (holder !== null) this.byId.get(holder)?.poll()
      },
      () => {}, // unreachable: the waiters' polling floor covers it
    )
  }

  unwant(hash: string): void {
    const listening = this.listening.get(hash)
    if (listening === undefined || --listening.wanted > 0) return
    // Kept for a lease period: a key waited on again soon costs no new subscription.
    listening.linger = setTimeout(() => this.stopListening(hash, listening), this.io.leaseMs)
    listening.linger.unref()
  }

  private stopListening(hash: string, listening: Listening): void {
    if (this.forget(hash, listening)) this.subscriber?.unsubscribe(listening.channel)
  }

  private forget(hash: string, listening: Listening): boolean {
    if (this.listening.get(hash) !== listening) return false
    if (listening.linger !== undefined) clearTimeout(listening.linger)
    this.listening.delete(hash)
    this.channels.delete(listening.channel)
    return true
  }

  async close(): Promise<void> {
    for (const listening of this.listening.values()) {
      if (listening.linger !== undefined) clearTimeout(listening.linger)
    }
    this.listening.clear()
    this.channels.clear()
    const subscriber = this.subscriber
    this.subscriber = undefined
    subscriber?.close()
  }

  /** How often a waiter of this process asked again on its polling floor, and found its turn had come (see {@link counters}). */
  private floorRechecks = 0
  private floorWakeUps = 0

  flooredOut(turnCame: boolean): void {
    this.floorRechecks++
    if (turnCame) this.floorWakeUps++
  }

  inspect(): { waiters: number; leases: number; keys: number } {
    return { waiters: this.byId.size, leases: this.leases.size, keys: this.byHash.size }
  }

  counters(): RedisCoordinationCounters {
    return { floorRechecks: this.floorRechecks, floorWakeUps: this.floorWakeUps }
  }

  /** A message on a key's channel (see the scripts): `g` hand-off, `w` wake, `x` evicted, `s` superseded, `r` dedupe result. */
  private hear(channel: string, message: string): void {
    const hash = this.channels.get(channel)
    if (hash === undefined) return
    const kind = message[0]
    if (kind === 'r') {
      const [, leader, payload = ''] = splitN(message, 3)
      for (const waiter of [...(this.byHash.get(hash) ?? [])]) {
        if (waiter.mode !== 'lead') continue
        if (waiter.follow === leader) waiter.finish({ kind: 'result', payload })
        else waiter.poll()
      }
      return
    }
    const lines = message.split('\n')
    if (kind === 'g') {
      const [, id = '', fence = '', server = ''] = lines
      this.byId.get(id)?.handed(Number(fence), server)
    } else if (kind === 'w') {
      const head = lines[1]
      if (head !== undefined) this.byId.get(head)?.poll()
      else for (const waiter of [...(this.byHash.get(hash) ?? [])]) waiter.poll()
    } else if (kind === 'x') {
      for (const id of lines.slice(1)) this.leases.get(id)?.evict()
    } else if (kind === 's') {
      for (const id of lines.slice(1)) this.byId.get(id)?.finish({ kind: 'superseded' })
    }
  }
}

/** Splits on the first n - 1 newlines: the last part (a payload) may contain any. */
function splitN(text: string, n: number): string[] {
  const parts: string[] = []
  let from = 0
  while (parts.length < n - 1) {
    const at = text.indexOf('\n', from)
    if (at === -1) break
    parts.push(text.slice(from, at))
    from = at + 1
  }
  parts.push(text.slice(from))
  return parts
}
