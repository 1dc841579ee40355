import type { PluginHost, Task } from '@vega/job-core'
import type { Answer } from '../bounded.js'
import { type Deferred, deferred } from '../deferred.js'
import type { CoordinationEngine, HandOff, ReleaseKind } from '../engine.js'
import { LeaseLostError } from '../errors.js'
import type { FencingToken } from '../fencing-token.js'
import { joinGroup, leaveGroup } from './groups.js'

/** What a lease does when it is lost or taken over. */
export interface LeaseOwner {
  /** The renewal failed, or assertLease found the token stale. */
  lost(error: LeaseLostError): void
  /** A restart elsewhere took the key (heard as a wake-up, or a renewal found another holder). */
  evicted?(): void
}

// fencingToken(ctx) only has the body's context. A lease is registered by
// its task's id from its grant until its body exited (see leaseOfBody in
// fencing.ts, which ties a context to one lease for good).
const byTaskId = new Map<number, Set<Lease>>()

export function leasesOfTask(taskId: number): ReadonlySet<Lease> | undefined {
  return byTaskId.get(taskId)
}

/** Where a lease is found by holder id (wake-ups) and where its release is counted (shutdown waits for it). */
export interface LeaseHome {
  readonly leases: Map<string, Lease>
  releaseStarted(): void
  releaseDone(): void
  /** The release handed the key on: a waiter of this process starts on the reply, not on its wake-up. */
  handedOff(handOff: HandOff): void
}

/**
 * One granted (or, for restart, being granted) call: renews every
 * leaseMs / 3 while the body runs, loses the lease when a renewal fails or
 * the last confirmed renewal is older than leaseMs (a process paused past its
 * lease learns it on its first tick, before its body can hand out a value),
 * and releases at the end.
 */
export class Lease implements Answer<boolean | HandOff> {
  fence: number | undefined
  runId: string | undefined
  lostWith: LeaseLostError | undefined
  private ended = false
  /** Who waits for the release's answer (an engine that does not keep order), called once it came. */
  private releaseWaiters: (() => void)[] | undefined
  private releaseAnswered = false
  private timer: NodeJS.Timeout | undefined
  private validUntil = 0
  /** Made when a body first asks for the token: most never do, and an unread rejection costs a stack trace. */
  private granted: Deferred<FencingToken> | undefined
  private settledWith:
    | { readonly ok: true; readonly token: FencingToken }
    | { readonly ok: false; readonly error: () => unknown }
    | undefined

  constructor(
    readonly io: CoordinationEngine,
    readonly hash: string,
    readonly holderId: string,
    readonly task: Task<unknown>,
    /** The runtime of `task`: tells apart two runtimes' tasks with one id. */
    readonly host: PluginHost,
    private readonly owner: LeaseOwner,
    private readonly home: LeaseHome,
    /** The key has one slot: its holder is in its lock, not in a set. */
    readonly single: boolean,
  ) {
    home.leases.set(holderId, this)
    joinGroup(byTaskId, task.id, this)
  }

  get token(): Promise<FencingToken> {
    if (this.granted === undefined) {
      this.granted = deferred()
      quiet(this.granted.promise)
      this.settleToken()
    }
    return this.granted.promise
  }

  private settle(outcome: NonNullable<Lease['settledWith']>): void {
    if (this.settledWith !== undefined) return
    this.settledWith = outcome
    this.settleToken()
  }

  private settleToken(): void {
    const outcome = this.settledWith
    if (this.granted === undefined || outcome === undefined) return
    if (outcome.ok) this.granted.resolve(outcome.token)
    else this.granted.reject(outcome.error())
  }

  get active(): boolean {
    return !this.ended && this.lostWith === undefined
  }

  /** The storage granted `fence`: start renewing. `sentAt` is when the grant was asked for. */
  activate(fence: number, runId: string, sentAt: number): void {
    this.fence = fence
    this.runId = runId
    this.validUntil = sentAt + this.io.leaseMs
    this.settle({ ok: true, token: { fence, runId, key: this.hash } })
    if (!this.ended) this.schedule()
  }

  /** The grant never came (the storage unreachable). */
  refuse(error: unknown): void {
    this.settle({ ok: false, error: () => error })
  }

  lose(error: LeaseLostError): void {
    if (this.ended || this.lostWith !== undefined) return
    this.lostWith = error
    this.stopTimer()
    // A body still waiting for the grant hears of the loss; a later
    // fencingToken(ctx) rejects with it too, even after a grant.
    const waiting = this.settledWith === undefined ? this.granted : undefined
    this.settledWith = { ok: false, error: () => error }
    this.granted = undefined
    waiting?.reject(error)
    this.owner.lost(error)
  }

  evict(): void {
    if (this.ended || this.lostWith !== undefined) return
    if (this.owner.evicted === undefined) {
      this.lose(this.lostError('another call took the key'))
      return
    }
    this.stopTimer()
    this.owner.evicted()
  }

  lostError(why: string, cause?: unknown): LeaseLostError {
    return new LeaseLostError(
      `${this.io.name}: task #${this.task.id} lost its lease on key ${this.hash}${this.fence === undefined ? '' : ` (fence ${this.fence})`}: ${why}.`,
      this.hash,
      this.fence,
      cause === undefined ? undefined : { cause },
    )
  }

  /** Stops renewing and gives the key back; shutdown waits until the storage has it (or could not be reached). */
  end(kind: ReleaseKind = 'plain', payload = ''): void {
    if (this.ended) return
    this.ended = true
    this.stopTimer()
    this.forget()
    if (this.settledWith === undefined) {
      this.settle({
        ok: false,
        error: () => this.lostError(`the call ended before ${this.io.storage} granted its lease`),
      })
    }
    // A lost lease may still be ours in the storage (a renewal that timed out): give it back too.
    this.home.releaseStarted()
    this.io.releaseTo(
      { hash: this.hash, id: this.holderId, kind, payload, single: this.single },
      this,
    )
  }

  /** The release's reply (Answer): the storage has the key back, or gave it to the next waiter. */
  answered(reply: boolean | HandOff): void {
    if (typeof reply === 'object') this.home.handedOff(reply)
    this.releaseSettled()
  }

  /** The release could not reach the storage (Answer): the lease expires by itself within leaseMs. */
  failed(): void {
    this.releaseSettled()
  }

  private releaseSettled(): void {
    this.releaseAnswered = true
    const waiters = this.releaseWaiters
    this.releaseWaiters = undefined
    if (waiters !== undefined) for (const then of waiters) then()
    this.home.releaseDone()
  }

  /**
   * Calls `then` once the release was answered (or could not reach the
   * storage, within connectTimeoutMs); at once when the lease has not ended:
   * a body still running (one that ignores its signal) never holds its
   * caller's answer back. A callback, not a promise: every call on an engine
   * that does not keep order waits here.
   */
  afterRelease(then: () => void): void {
    if (!this.ended || this.releaseAnswered) then()
    else (this.releaseWaiters ??= []).push(then)
  }

  /** {@link afterRelease} as a promise. */
  whenReleased(): Promise<void> {
    return new Promise((resolve) => this.afterRelease(resolve))
  }

  private forget(): void {
    this.home.leases.delete(this.holderId)
    leaveGroup(byTaskId, this.task.id, this)
  }

  private schedule(): void {
    this.timer = setTimeout(() => this.tick(), Math.max(1, Math.floor(this.io.leaseMs / 3)))
    this.timer.unref()
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }

  private tick(): void {
    this.timer = undefined
    if (!this.active) return
    const sentAt = performance.now()
    if (sentAt > this.validUntil) {
      this.lose(
        this.lostError(
          `no renewal confirmed for ${this.io.leaseMs} ms (leaseMs); the process was paused or ${this.io.storage} was slow`,
        ),
      )
      return
    }
    this.io.renew(this.hash, this.holderId, this.runId ?? '?', this.single).then(
      (verdict) => {
        if (!this.active) return
        if (verdict === -1) {
          this.lose(
            this.lostError(
              `another ${this.io.storage} server answers for the key since the grant (another ${this.io.runIdName}: a restart or a failover); its token is not honoured`,
            ),
          )
          return
        }
        if (verdict === 0) {
          if (this.owner.evicted !== undefined) this.evict()
          else this.lose(this.lostError('the lease expired or another call holds the key'))
          return
        }
        this.validUntil = sentAt + this.io.leaseMs
        this.schedule()
      },
      (error: unknown) =>
        this.lose(this.lostError(`the renewal could not reach ${this.io.storage}`, error)),
    )
  }
}

/** Swallows a rejection someone may never read (a token nobody asked for). */
function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {})
  return promise
}
