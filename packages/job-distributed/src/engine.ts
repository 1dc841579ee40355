import type { Answer } from './bounded.js'

/**
 * How a call asks for a key:
 *
 * | mode     | strategy   | the storage grants when                                          |
 * | -------- | ---------- | ---------------------------------------------------------------- |
 * | `try`    | exhaust    | fewer than `limit` live holders; else the call is dropped         |
 * | `take`   | restart    | always, evicting every live holder                               |
 * | `lead`   | dedupe     | no live holder and no stored result of the followed leader        |
 * | `queue`  | serialize  | live holders + the call's place in the FIFO < `limit`              |
 * | `latest` | keepLatest | as `queue`, with one waiter per key (a newer one supersedes it)    |
 *
 * @example
 * ```ts
 * const mode: AcquireMode = 'queue'
 * ```
 */
export type AcquireMode = 'queue' | 'latest' | 'try' | 'take' | 'lead'

/**
 * How a holder gives a key back: `plain` (wake the next waiter), `result` (a
 * dedupe leader leaves its outcome for the followers that wait for it),
 * `wake` (a dedupe leader without an outcome to share: its followers ask
 * again, and one of them leads).
 *
 * @example
 * ```ts
 * const kind: ReleaseKind = 'plain'
 * ```
 */
export type ReleaseKind = 'plain' | 'wake' | 'result'

/**
 * One grant request, as the waiter sends it.
 *
 * @example
 * ```ts
 * const request: AcquireRequest = { hash: 'k', id: 'a.1.1', mode: 'queue', limit: 1, follow: '-', recheck: false }
 * ```
 */
export interface AcquireRequest {
  /** The coordinated key's hash (`ctx.hash`). */
  readonly hash: string
  /** The call's holder id: unique across processes. */
  readonly id: string
  readonly mode: AcquireMode
  /** Holders at once (serialize's `concurrency`; 1 for the others). */
  readonly limit: number
  /** The dedupe leader this call follows, `-` until known. */
  readonly follow: string
  /** The call asked before and was queued (keepLatest: out of the line now means superseded). */
  readonly recheck: boolean
}

/**
 * One release, as a lease (or a waiter granted too late) sends it.
 *
 * @example
 * ```ts
 * const request: ReleaseRequest = { hash: 'k', id: 'a.1.1', kind: 'result', payload: '42', single: true }
 * ```
 */
export interface ReleaseRequest {
  /** The coordinated key's hash (`ctx.hash`). */
  readonly hash: string
  /** The holder id giving the key back. */
  readonly id: string
  readonly kind: ReleaseKind
  /** The dedupe leader's outcome (`kind: 'result'`), else `''`. */
  readonly payload: string
  /** The key has one slot (limit 1): a release may hand it to the next waiter. */
  readonly single: boolean
}

/**
 * The storage's answer to an {@link AcquireRequest}.
 *
 * @example
 * ```ts
 * const reply: AcquireReply = { kind: 'granted', fence: 7, runId: 'db-1', evicted: [] }
 * ```
 */
export type AcquireReply =
  | {
      readonly kind: 'granted'
      readonly fence: number
      /** Names the storage that granted (see `FencingToken.runId`). */
      readonly runId: string
      /** Holders a `take` evicted. */
      readonly evicted: readonly string[]
    }
  | { readonly kind: 'waiting'; readonly position: number; readonly others: string[] }
  | { readonly kind: 'result'; readonly payload: string }
  /** A keepLatest waiter asked again and found itself out of the line: a newer call took its place. */
  | { readonly kind: 'superseded' }

/**
 * A renewal's or an assertion's verdict: `1` still held, `0` not held any
 * more (expired, or another call holds the key), `-1` another storage
 * answers since the grant (its token is not honoured).
 *
 * @example
 * ```ts
 * const verdict: LeaseVerdict = 1
 * ```
 */
export type LeaseVerdict = -1 | 0 | 1

/**
 * A release that granted the key to the next waiter: its holder id, its
 * fence, and the storage that granted ('' when the engine names it another way).
 *
 * @example
 * ```ts
 * const handOff: HandOff = { id: 'a1b2-42.7.1', fence: 8, server: '' }
 * ```
 */
export interface HandOff {
  readonly id: string
  readonly fence: number
  readonly server: string
}

/**
 * What a wake-up says, once an engine has read it off its wire (Redis
 * sharded pub/sub, Postgres NOTIFY). A wake-up only ever hurries a waiter:
 * the storage is the truth, and every waiter re-checks on its floor anyway.
 *
 * @example
 * ```ts
 * const message: WakeMessage = { kind: 'wake', head: undefined }
 * ```
 */
export type WakeMessage =
  /** A release granted the key to waiter `id` (its fence, and the storage that granted, '' if unnamed). */
  | {
      readonly kind: 'handed'
      readonly id: string
      readonly fence: number
      readonly server: string
    }
  /** Ask again: waiter `head` only, or every waiter of the key. */
  | { readonly kind: 'wake'; readonly head: string | undefined }
  /** A restart took the key from these holders. */
  | { readonly kind: 'evicted'; readonly ids: readonly string[] }
  /** A newer keepLatest call took these waiters' place. */
  | { readonly kind: 'superseded'; readonly ids: readonly string[] }
  /** Dedupe leader `leader` left its outcome: `payload` when the message carries it, else the followers ask for it. */
  | { readonly kind: 'result'; readonly leader: string; readonly payload: string | undefined }

/**
 * How an engine delivers wake-ups to one process: it calls `hear` with a
 * key's hash and what the message says, and `recheck` with a key's hash
 * when its waiters may have missed messages (a subscription that just
 * started to hold, a reconnected listener).
 *
 * @example
 * ```ts
 * const listener: WakeListener = { hear: (hash, message) => {}, recheck: (hash) => {} }
 * ```
 */
export interface WakeListener {
  hear(hash: string, message: WakeMessage): void
  recheck(hash: string): void
}

/**
 * The storage and the wake-ups of one engine: everything
 * `createDistributedCoordination` needs from Redis or Postgres. Every
 * round trip is bounded by the engine's `connectTimeoutMs` and fails with
 * its unavailable error (see `boundedTo`).
 *
 * @example
 * ```ts
 * const coordination = createDistributedCoordination(engine, { codec: jsonCodec })
 * ```
 */
export interface CoordinationEngine {
  /** The package, at the start of messages: `@vega/job-postgres`. */
  readonly name: string
  /** What the storage is called in messages: `Postgres`. */
  readonly storage: string
  /** The factory, in option errors: `createPostgresCoordination`. */
  readonly factory: string
  /** What the engine's README calls the factory's result, in errors: `cluster`, `coordination`. */
  readonly handle: string
  /** What a token's `runId` is, in errors: `run_id`, `instance id`. */
  readonly runIdName: string
  /** How long a grant holds without renewal (ms); holders renew, and waiters re-check, every leaseMs / 3. */
  readonly leaseMs: number
  /**
   * Whether what one process sends reaches the storage in the order sent (one
   * connection: Redis). When not (a pool of connections: Postgres), a call's
   * answer waits until its release was answered, so the caller's next call
   * with the key finds it free instead of racing the release.
   */
  readonly ordered: boolean
  /** Asks for a grant; `to` hears the reply (`late` a grant that came after the timeout). */
  acquireTo(request: AcquireRequest, to: Answer<AcquireReply>): void
  /** Extends a lease. `single`: the key has one slot (limit 1). */
  renew(hash: string, id: string, runId: string, single: boolean): Promise<LeaseVerdict>
  /** Whether a lease is still current, in one round trip. */
  assert(hash: string, id: string, runId: string, single: boolean): Promise<LeaseVerdict>
  /**
   * Gives the key back; `to` hears whether this call still held it, or the
   * hand-off when the release granted the key to the next waiter (a waiter of
   * this process then starts on the reply, not on its wake-up).
   */
  releaseTo(request: ReleaseRequest, to: Answer<boolean | HandOff>): void
  /** Gives up a waiter's place, or the key if a release handed it over meanwhile. */
  leave(hash: string, id: string, single: boolean): Promise<boolean>
  /** Who holds a key with one slot: null when nobody does. */
  holderOf(hash: string): Promise<string | null>
  /**
   * The storage behind a hand-off: the one the message names, else the one
   * this process is known to reach; undefined makes the waiter re-check.
   */
  handOffServer(named: string): string | undefined
  /** Starts delivering wake-ups (once; later calls are no-ops). */
  listen(listener: WakeListener): void
  /** A waiter or holder of the key needs its wake-ups; the engine calls `recheck(hash)` once they are sure to arrive. */
  want(hash: string): void
  /** One fewer needs the key's wake-ups. */
  unwant(hash: string): void
  /** Stops the wake-ups (every runtime using the coordination shut down). */
  close(): Promise<void>
  /** Fires `onEnd` once when the user's client ended for good. */
  onClientEnd(onEnd: () => void): void
}
