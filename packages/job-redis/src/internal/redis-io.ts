import type { Cluster, Redis } from 'ioredis'

/** What the package talks to: a client of one primary, or of a Redis Cluster. */
export type RedisClient = Redis | Cluster

import type {
  AcquireReply,
  AcquireRequest,
  Answer,
  CoordinationEngine,
  HandOff,
  LeaseVerdict,
  ReleaseRequest,
  WakeListener,
} from '@vega/job-distributed'
import { io } from './io.js'
import { KeyChannels } from './key-channels.js'
import {
  ACQUIRE_ARGV,
  acquireArgs,
  holdersPart,
  LEAVE_KEYS,
  leaveArgs,
  RELEASE_KEYS,
  releaseArgs,
} from './script-args.js'
import { scripts } from './scripts.js'

/** The fence counter outlives every lease by far; it is refreshed at each grant. */
const FENCE_TTL_FLOOR_MS = 24 * 60 * 60 * 1000

/**
 * The Redis engine of the coordination: its storage (every round trip the
 * package makes, each a Lua script bounded by `connectTimeoutMs`: a call that
 * cannot complete in time rejects with `RedisUnavailableError`, whatever
 * ioredis does with it afterwards) and its wake-ups (sharded pub/sub, see
 * {@link KeyChannels}).
 */
export class RedisIO implements CoordinationEngine {
  readonly name: string = '@vega/job-redis'
  readonly storage: string = 'Redis'
  readonly factory: string = 'createRedisCoordination'
  readonly handle: string = 'cluster'
  readonly runIdName: string = 'run_id'
  /** One connection keeps commands in order: a release sent before the caller's next call reaches Redis first. */
  readonly ordered: boolean = true
  private readonly channels: KeyChannels
  readonly fenceTtlMs: number
  /** The numbers every script call sends, as the strings ioredis would make of them each time. */
  readonly leaseArg: string
  readonly fenceTtlArg: string
  /**
   * The run_id of the server at the other end of one connection (`redis.stream`),
   * learned from a grant on it: one TCP connection reaches one server process,
   * so grants answered on it need not ask again (an INFO costs the server more
   * than the rest of the grant).
   */
  private known: { readonly socket: unknown; readonly runId: string } | undefined
  /** The connection on which a grant that asks for the run_id is on the wire: the grants behind it need not ask. */
  private asking: unknown
  /** The connection whose writes wait for the end of this tick (see {@link gatherWrites}). */
  private gathering: unknown

  /** A Redis Cluster client: every grant asks for the run_id of the node that holds its key. */
  readonly onCluster: boolean
  /** '1' when a hand-off (a release granting the next waiter) names its server in its message: on a cluster, where a grant always asks. */
  readonly handOffRunIdArg: string

  constructor(
    readonly redis: RedisClient,
    readonly prefix: string,
    readonly leaseMs: number,
    readonly connectTimeoutMs: number,
  ) {
    this.fenceTtlMs = Math.max(FENCE_TTL_FLOOR_MS, leaseMs * 1000)
    this.leaseArg = String(leaseMs)
    this.fenceTtlArg = String(this.fenceTtlMs)
    this.onCluster = redis.isCluster === true
    this.handOffRunIdArg = this.onCluster ? '1' : '0'
    this.channels = new KeyChannels(redis, (hash) => this.channel(hash), leaseMs)
  }

  listen(listener: WakeListener): void {
    this.channels.open(listener)
  }

  want(hash: string): void {
    this.channels.want(hash)
  }

  unwant(hash: string): void {
    this.channels.unwant(hash)
  }

  async close(): Promise<void> {
    this.channels.close()
  }

  /** The user's client ended for good: its subscriber duplicate goes with it (no reconnect loop left behind). */
  onClientEnd(onEnd: () => void): void {
    this.redis.once('end', onEnd)
  }

  /**
   * The key's wake-up channel: sharded pub/sub (`SPUBLISH`), in the key's
   * hash tag, so on a cluster it lives in the key's slot and only the
   * processes that wait on the key hear it.
   */
  channel(hash: string): string {
    return `${this.base(hash)}~wake`
  }

  /**
   * The server behind a hand-off heard on pub/sub: the one the message names
   * (a cluster), else the one this client's connection is known to reach
   * (undefined: the waiter asks with a re-check).
   */
  handOffServer(named: string): string | undefined {
    if (named !== '') return named
    if (this.onCluster || this.redis.status !== 'ready') return undefined
    const known = this.known
    return known !== undefined && known.socket === (this.redis as Redis).stream
      ? known.runId
      : undefined
  }

  key(hash: string, part: 'lock' | 'hold' | 'queue' | 'wexp'): string {
    return `${this.base(hash)}${part}`
  }

  /**
   * What every key of one coordinated key starts with. The hash sits in a
   * hash tag (`{…}`): on Redis Cluster all keys a script touches for it live
   * in one slot, and different keys spread over the slots.
   */
  base(hash: string): string {
    return `${this.prefix}:{${hash}}:`
  }

  /** Runs `step` with the timeout and tells `to` how it ended; a late success goes to `to.late` (to undo a grant nobody waits for). */
  send<T>(operation: string, step: () => Promise<T>, to: Answer<T>): void {
    if (this.redis.status === 'end') {
      const error = io.unavailable(
        'the Redis client is closed (quit or disconnect was called); create the coordination with an open client.',
        operation,
      )
      // Never synchronously: the caller finishes its own bookkeeping first.
      queueMicrotask(() => to.failed(error))
      return
    }
    this.gatherWrites()
    io.boundedTo(operation, this.connectTimeoutMs, step, to)
  }

  /**
   * Holds the connection's writes until the end of this tick, so that what
   * the package sends in one tick leaves in one packet: a call's release and
   * its caller's next call (sent in the microtasks that follow the body's
   * end) reach Redis in one read, and come back in one reply, instead of
   * costing each side a system call and a wake-up apiece. Nothing waits
   * longer than the tick it was sent in, and one connection keeps commands
   * in order either way. A cluster client (a connection per node) sends as
   * ioredis does.
   */
  private gatherWrites(): void {
    if (this.onCluster || this.redis.status !== 'ready') return
    const stream = (this.redis as Redis).stream
    if (stream === undefined || this.gathering === stream) return
    this.gathering = stream
    stream.cork()
    process.nextTick(() => {
      if (this.gathering === stream) this.gathering = undefined
      stream.uncork()
    })
  }

  /** {@link send} as a promise, for the round trips off the hot path. */
  bounded<T>(operation: string, step: () => Promise<T>, late?: (value: T) => void): Promise<T> {
    return new Promise<T>((answered, failed) => {
      this.send(
        operation,
        step,
        late === undefined ? { answered, failed } : { answered, failed, late },
      )
    })
  }

  /** Asks for a grant; `to` hears the reply. */
  acquireTo(request: AcquireRequest, to: Answer<AcquireReply>): void {
    const { hash, id, mode, limit, follow, recheck } = request
    const ask = !this.knowsRunId()
    const socket = this.socket()
    if (ask) this.asking = socket
    const args = acquireArgs(this, hash, id, mode, limit, follow, recheck, ask ? '1' : '0')
    const onReply = (raw: unknown) => {
      if (ask) this.stopAsking(socket)
      return this.parseAcquire(raw)
    }
    const onError = (error: unknown): never => {
      if (ask) this.stopAsking(socket)
      throw error
    }
    this.send(
      'acquire',
      () =>
        scripts.acquire.run(this.redis, args.length - ACQUIRE_ARGV[mode], args, onReply, onError),
      to,
    )
  }

  /**
   * Whether a grant sent now is answered after the run_id of its connection
   * is known: one connection answers in order, so a grant behind one that
   * asks (restart sends many without waiting) need not ask too.
   */
  private knowsRunId(): boolean {
    // On a cluster each key's node has its own run_id; one connection says nothing about another node.
    if (this.onCluster) return false
    const socket = this.socket()
    return this.known?.socket === socket || this.asking === socket
  }

  /**
   * The connection a command sent now goes out on, for a single-node client
   * (a cluster client has one per node: none here). Before the client is
   * ready, commands wait in ioredis's offline queue and leave in order on the
   * next connection: the first grant queued there asks for the run_id, the
   * ones queued behind it need not (restart sends many before the first
   * connection is up). A grant answered on a connection whose run_id is not
   * known still asks on its own (see {@link parseAcquire}).
   */
  private socket(): unknown {
    if (this.onCluster) return undefined
    return this.redis.status === 'ready' ? (this.redis as Redis).stream : OFFLINE_QUEUE
  }

  private stopAsking(socket: unknown): void {
    if (this.asking === socket) this.asking = undefined
  }

  /**
   * Reads a reply of ACQUIRE and names the server of a grant. A reply is
   * handled (microtasks of the socket's data event) while `redis.stream` is
   * still the connection it came on: ioredis replaces the stream only after
   * the old one closed.
   */
  private parseAcquire(raw: unknown): AcquireReply | Promise<AcquireReply> {
    const reply = raw as (number | string)[]
    if (reply[0] === 2) return { kind: 'result', payload: String(reply[1]) }
    if (reply[0] === 3) return SUPERSEDED
    if (reply[0] !== 1) {
      const named = String(reply[2])
      // A single server's run_id, learned while waiting: a hand-off heard later needs no re-check.
      if (named !== '' && !this.onCluster) this.known = { socket: this.socket(), runId: named }
      return { kind: 'waiting', position: Number(reply[1]), others: reply.slice(3).map(String) }
    }
    const fence = Number(reply[1])
    const evicted = reply.length > 3 ? reply.slice(3).map(String) : NONE
    const socket = this.socket()
    const asked = String(reply[2])
    if (asked !== '') {
      this.known = { socket, runId: asked }
      return { kind: 'granted', fence, runId: asked, evicted }
    }
    const known = this.known
    if (known !== undefined && known.socket === socket) {
      return { kind: 'granted', fence, runId: known.runId, evicted }
    }
    // Sent on an earlier connection, answered on this one (ioredis resent it after a reconnect): ask this server.
    return this.redis.info('server').then((info) => {
      const runId = /run_id:(\w+)/.exec(info)?.[1]
      // A grant whose server cannot be named carries a run_id no server has: assertLease refuses it.
      if (runId === undefined || this.socket() !== socket) {
        return { kind: 'granted', fence, runId: '?', evicted }
      }
      this.known = { socket, runId }
      return { kind: 'granted', fence, runId, evicted }
    })
  }

  /** `single`: the key has one slot, so its holder is in its lock (see scripts.ts). `runId`: the granting server's. */
  renew(hash: string, id: string, runId: string, single: boolean): Promise<LeaseVerdict> {
    const args = [this.key(hash, holdersPart(single)), id, this.leaseArg, single ? '1' : '0', runId]
    return this.bounded('renew', () =>
      scripts.renew.run(this.redis, 1, args, (r) => r as LeaseVerdict),
    )
  }

  assert(hash: string, id: string, runId: string, single: boolean): Promise<LeaseVerdict> {
    return this.bounded('assertLease', () =>
      scripts.assert.run(
        this.redis,
        1,
        [this.key(hash, holdersPart(single)), id, runId, single ? '1' : '0'],
        (r) => r as LeaseVerdict,
      ),
    )
  }

  /**
   * Gives the key back; `to` hears whether this call still held it, or, when
   * the release handed a single-slot key to the next waiter, that hand-off
   * (what the key's channel was told).
   */
  releaseTo(request: ReleaseRequest, to: Answer<boolean | HandOff>): void {
    const args = releaseArgs(this, request)
    const keys = RELEASE_KEYS[request.kind]
    const step = () => scripts.release.run(this.redis, keys, args, parseRelease)
    this.send('release', step, to)
  }

  /** Who holds a key with one slot (a plain GET of its lock): null when nobody does. */
  holderOf(hash: string): Promise<string | null> {
    return this.bounded('holderOf', () => this.redis.get(this.key(hash, 'lock')))
  }

  /** Gives up a waiter's place, or the key if a release handed it over meanwhile (it goes on to the next). */
  leave(hash: string, id: string, single: boolean): Promise<boolean> {
    const args = leaveArgs(this, hash, id, single)
    return this.bounded('leave', () => scripts.leave.run(this.redis, LEAVE_KEYS, args, isOne))
  }
}

const isOne = (reply: unknown): boolean => reply === 1

function parseRelease(reply: unknown): boolean | HandOff {
  if (!Array.isArray(reply)) return reply === 1
  const [id, fence, server] = reply as string[]
  return { id: String(id), fence: Number(fence), server: String(server ?? '') }
}

const NONE: readonly string[] = Object.freeze([])
/** Where commands sent before the client is ready wait (see {@link RedisIO.socket}). */
const OFFLINE_QUEUE = Symbol('offline queue')
const SUPERSEDED: AcquireReply = Object.freeze({ kind: 'superseded' })
