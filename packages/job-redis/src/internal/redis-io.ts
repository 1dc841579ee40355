import type { Redis } from 'ioredis'
import { RedisUnavailableError } from '../errors.js'
import { scripts } from './scripts.js'

export type AcquireMode = 'queue' | 'latest' | 'try' | 'take' | 'lead'

export type AcquireReply =
  | {
      readonly kind: 'granted'
      readonly fence: number
      readonly runId: string
      readonly evicted: string[]
    }
  | { readonly kind: 'waiting'; readonly position: number; readonly others: string[] }
  | { readonly kind: 'result'; readonly payload: string }

export type ReleaseKind = 'plain' | 'wake' | 'result'

/** The fence counter outlives every lease by far; it is refreshed at each grant. */
const FENCE_TTL_FLOOR_MS = 24 * 60 * 60 * 1000

/**
 * Every Redis round trip the package makes, each bounded by
 * `connectTimeoutMs`: a call that cannot complete in time rejects with
 * `RedisUnavailableError`, whatever ioredis does with it afterwards.
 */
export class RedisIO {
  readonly channel: string
  readonly fenceTtlMs: number
  /**
   * The run_id of the server at the other end of one connection (`redis.stream`),
   * learned from a grant on it: one TCP connection reaches one server process,
   * so grants answered on it need not ask again (an INFO costs the server more
   * than the rest of the grant).
   */
  private known: { readonly socket: unknown; readonly runId: string } | undefined
  /** The connection on which a grant that asks for the run_id is on the wire: the grants behind it need not ask. */
  private asking: unknown

  constructor(
    readonly redis: Redis,
    readonly prefix: string,
    readonly leaseMs: number,
    readonly connectTimeoutMs: number,
  ) {
    this.channel = `${prefix}:~wake`
    this.fenceTtlMs = Math.max(FENCE_TTL_FLOOR_MS, leaseMs * 1000)
  }

  key(hash: string, part: 'fence' | 'hold' | 'queue' | 'wexp' | 'followers'): string {
    return `${this.prefix}:${hash}:${part}`
  }

  resultKey(hash: string, leaderId: string): string {
    return `${this.prefix}:${hash}:result:${leaderId}`
  }

  /** Runs `step` with the timeout; a late success is handed to `late` (to undo a grant nobody waits for). */
  bounded<T>(operation: string, step: () => Promise<T>, late?: (value: T) => void): Promise<T> {
    if (this.redis.status === 'end') {
      return Promise.reject(
        new RedisUnavailableError(
          `@vega/job-redis ${operation}: the Redis client is closed (quit or disconnect was called); create the coordination with an open client.`,
          operation,
        ),
      )
    }
    return new Promise<T>((resolve, reject) => {
      let timedOut = false
      const timer = setTimeout(() => {
        timedOut = true
        reject(
          new RedisUnavailableError(
            `@vega/job-redis ${operation}: Redis did not answer within connectTimeoutMs (${this.connectTimeoutMs} ms); it is stopped, paused or unreachable.`,
            operation,
          ),
        )
      }, this.connectTimeoutMs)
      step().then(
        (value) => {
          clearTimeout(timer)
          if (timedOut) late?.(value)
          else resolve(value)
        },
        (error: unknown) => {
          clearTimeout(timer)
          if (timedOut) return
          reject(
            new RedisUnavailableError(
              `@vega/job-redis ${operation}: Redis failed: ${error instanceof Error ? error.message : String(error)}`,
              operation,
              { cause: error },
            ),
          )
        },
      )
    })
  }

  acquire(
    hash: string,
    id: string,
    mode: AcquireMode,
    limit: number,
    follow: string,
    late: (reply: AcquireReply) => void,
  ): Promise<AcquireReply> {
    const base = `${this.prefix}:${hash}:`
    const ask = !this.knowsRunId()
    const socket = this.redis.stream
    if (ask) this.asking = socket
    // KEYS then ARGV of ACQUIRE, in one array: the call path copies it once, in ioredis.
    const args = [
      `${base}fence`,
      `${base}hold`,
      `${base}queue`,
      `${base}wexp`,
      `${base}result:${follow}`,
      `${base}followers`,
      id,
      mode,
      limit,
      this.leaseMs,
      this.fenceTtlMs,
      this.channel,
      hash,
      ask ? '1' : '0',
    ]
    const onReply = (raw: unknown) => {
      if (ask) this.stopAsking(socket)
      return this.withRunId(parseAcquire(raw))
    }
    const onError = (error: unknown): never => {
      if (ask) this.stopAsking(socket)
      throw error
    }
    return this.bounded(
      'acquire',
      () => scripts.acquire.run(this.redis, args, onReply, onError),
      late,
    )
  }

  /**
   * Whether a grant sent now is answered after the run_id of its connection
   * is known: one connection answers in order, so a grant behind one that
   * asks (restart sends many without waiting) need not ask too.
   */
  private knowsRunId(): boolean {
    if (this.redis.status !== 'ready') return false
    const socket = this.redis.stream
    return this.known?.socket === socket || this.asking === socket
  }

  private stopAsking(socket: unknown): void {
    if (this.asking === socket) this.asking = undefined
  }

  /**
   * Fills in the run_id of a grant. A reply is handled (microtasks of the
   * socket's data event) while `redis.stream` is still the connection it
   * came on: ioredis replaces the stream only after the old one closed.
   */
  private withRunId(reply: AcquireReply): AcquireReply | Promise<AcquireReply> {
    if (reply.kind !== 'granted') return reply
    const socket = this.redis.stream
    if (reply.runId !== '') {
      this.known = { socket, runId: reply.runId }
      return reply
    }
    if (this.known?.socket === socket) return { ...reply, runId: this.known.runId }
    // Sent on an earlier connection, answered on this one (ioredis resent it after a reconnect): ask this server.
    return this.redis.info('server').then((info) => {
      const runId = /run_id:(\w+)/.exec(info)?.[1]
      // A grant whose server cannot be named carries a run_id no server has: assertLease refuses it.
      if (runId === undefined || this.redis.stream !== socket) return { ...reply, runId: '?' }
      this.known = { socket, runId }
      return { ...reply, runId }
    })
  }

  renew(hash: string, id: string): Promise<boolean> {
    return this.bounded('renew', () =>
      scripts.renew.run(this.redis, [this.key(hash, 'hold'), id, this.leaseMs], isOne),
    )
  }

  assert(hash: string, id: string, runId: string): Promise<-1 | 0 | 1> {
    return this.bounded('assertLease', () =>
      scripts.assert.run(this.redis, [this.key(hash, 'hold'), id, runId], (r) => r as -1 | 0 | 1),
    )
  }

  release(hash: string, id: string, kind: ReleaseKind, payload = ''): Promise<boolean> {
    const base = `${this.prefix}:${hash}:`
    const args = [
      `${base}hold`,
      `${base}queue`,
      `${base}result:${id}`,
      `${base}followers`,
      id,
      this.channel,
      hash,
      this.leaseMs,
      kind,
      payload,
    ]
    return this.bounded('release', () => scripts.release.run(this.redis, args, isOne))
  }

  leave(hash: string, id: string): Promise<boolean> {
    return this.bounded('leave', () =>
      scripts.leave.run(
        this.redis,
        [this.key(hash, 'queue'), this.key(hash, 'wexp'), id, this.channel, hash],
        isOne,
      ),
    )
  }
}

const isOne = (reply: unknown): boolean => reply === 1

function parseAcquire(raw: unknown): AcquireReply {
  const reply = raw as (number | string)[]
  if (reply[0] === 1) {
    return {
      kind: 'granted',
      fence: Number(reply[1]),
      runId: String(reply[2]),
      evicted: reply.slice(3).map(String),
    }
  }
  if (reply[0] === 2) return { kind: 'result', payload: String(reply[1]) }
  return { kind: 'waiting', position: Number(reply[1]), others: reply.slice(2).map(String) }
}
