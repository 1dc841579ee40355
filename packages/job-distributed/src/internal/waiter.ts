import type { Task } from '@vega/job-core'
import type { Answer } from '../bounded.js'
import type { AcquireMode, AcquireReply, CoordinationEngine } from '../engine.js'
import { joinGroup, leaveGroup } from './groups.js'

export type WaitOutcome =
  | {
      readonly kind: 'granted'
      readonly fence: number
      readonly runId: string
      readonly evicted: readonly string[]
      readonly sentAt: number
    }
  | { readonly kind: 'result'; readonly payload: string }
  | { readonly kind: 'superseded' }
  | { readonly kind: 'dropped' }
  | { readonly kind: 'shutdown' }
  | { readonly kind: 'failed'; readonly error: unknown }

export interface WaiterHooks {
  /** The first reply that did not grant: where the call stands. */
  onQueued?(position: number, others: string[]): void
}

/** What the waiters of one coordination share: where they are found by hash and by id, and the keys' wake-ups. */
export interface WaiterRegistry {
  readonly byHash: Map<string, Set<Waiter>>
  readonly byId: Map<string, Waiter>
  /**
   * A waiter asked again because nothing woke it within leaseMs / 3 (its
   * polling floor), and the storage answered; `turnCame`: its grant, dedupe
   * result or supersession was already there, so a wake-up went unheard.
   */
  flooredOut(turnCame: boolean): void
}

/**
 * One parked call asking the storage for the key: it asks again when a
 * wake-up says the key moved, and at the latest every leaseMs / 3 (the
 * polling floor, which also keeps its place in the queue alive), until it is
 * granted (by its own request, or handed the key by the holder's release),
 * gets a dedupe result, is superseded, or gives up. From its first reply that
 * did not grant, it wants the key's wake-ups.
 */
export class Waiter implements Answer<AcquireReply> {
  /** The dedupe leader this call follows ('-' until known). */
  follow = '-'
  /** The runtime the call belongs to (shutdown finishes its waiters). */
  owner: unknown
  private inFlight = false
  /** When the acquire on the wire was sent (a grant's lease counts from then). */
  private sentAt = 0
  /** When the last acquire that found the call waiting was sent: a hand-off came later, so its lease counts from then. */
  private waitingSince = 0
  private listening = false
  private again = false
  private queuedOnce = false
  private finished = false
  private floor: NodeJS.Timeout | undefined
  /** The request on the wire was sent by the polling floor. */
  private onFloor = false

  constructor(
    readonly io: CoordinationEngine,
    readonly registry: WaiterRegistry,
    readonly hash: string,
    readonly id: string,
    readonly mode: AcquireMode,
    readonly limit: number,
    readonly task: Task<unknown>,
    /** Hears how the wait ended, once (not after abandon). */
    private readonly done: (outcome: WaitOutcome) => void,
    private readonly hooks: WaiterHooks = {},
  ) {
    joinGroup(registry.byHash, hash, this)
    registry.byId.set(id, this)
  }

  get waiting(): boolean {
    return !this.finished
  }

  /** Asks the storage (again); `floor`: because nothing woke the call within leaseMs / 3. */
  poll(cause: 'woken' | 'floor' = 'woken'): void {
    if (this.finished) return
    if (this.inFlight) {
      this.again = true
      return
    }
    this.onFloor = cause === 'floor'
    this.inFlight = true
    this.again = false
    this.clearFloor()
    this.sentAt = performance.now()
    const request = {
      hash: this.hash,
      id: this.id,
      mode: this.mode,
      limit: this.limit,
      follow: this.follow,
      recheck: this.queuedOnce,
    }
    this.io.acquireTo(request, this)
  }

  /** The acquire's reply (Answer). */
  answered(reply: AcquireReply): void {
    this.onReply(reply, this.sentAt)
  }

  /** The acquire could not reach the storage in time (Answer). */
  failed(error: unknown): void {
    this.inFlight = false
    if (this.finished) return
    this.finish({ kind: 'failed', error })
    this.leaveQueue()
  }

  /** A grant that arrived after the acquire timed out (Answer): nobody waits for it. */
  late(reply: AcquireReply): void {
    this.undo(reply)
  }

  /**
   * A release handed the key to this call (heard as a wake-up). It proceeds at
   * once unless a re-check is needed: a request on the wire (its reply says
   * how things stand), an unknown server, or a message heard so late that the
   * lease may be half gone (a paused process).
   */
  handed(fence: number, named: string): void {
    if (this.finished) return
    if (this.inFlight) {
      this.again = true
      return
    }
    const runId = this.io.handOffServer(named)
    if (runId === undefined || performance.now() - this.waitingSince > this.io.leaseMs / 2) {
      this.poll()
      return
    }
    this.finish({ kind: 'granted', fence, runId, evicted: NONE, sentAt: this.waitingSince })
  }

  /** Ends the wait from outside (superseded, dedupe result heard, shutdown). */
  finish(outcome: WaitOutcome): void {
    if (this.finished) return
    this.finished = true
    this.clearFloor()
    this.forget()
    this.done(outcome)
  }

  /** Shutdown: end the wait and give the place in the queue up at once, not a lease later. */
  shutdown(): void {
    if (this.finished) return
    this.finish({ kind: 'shutdown' })
    this.leaveQueue()
  }

  /** The task ended while waiting: leave the storage's queue; a grant still on the wire is given back. */
  abandon(): boolean {
    if (this.finished) return false
    this.finished = true
    this.clearFloor()
    this.forget()
    this.leaveQueue()
    return true
  }

  private onReply(reply: AcquireReply, sentAt: number): void {
    this.inFlight = false
    if (this.onFloor) this.registry.flooredOut(reply.kind !== 'waiting')
    if (this.finished) {
      this.undo(reply)
      return
    }
    if (reply.kind === 'granted') {
      this.finish({
        kind: 'granted',
        fence: reply.fence,
        runId: reply.runId,
        evicted: reply.evicted,
        sentAt,
      })
      return
    }
    if (reply.kind === 'result') {
      this.finish({ kind: 'result', payload: reply.payload })
      return
    }
    if (reply.kind === 'superseded') {
      this.finish({ kind: 'superseded' })
      return
    }
    if (this.mode === 'try') {
      this.finish({ kind: 'dropped' })
      return
    }
    this.waitingSince = sentAt
    if (this.mode === 'lead') {
      const leader = reply.others[0]
      // A result published while this reply was on the wire set `again`.
      if (leader !== undefined) this.follow = leader
    }
    if (!this.queuedOnce) {
      this.queuedOnce = true
      this.hooks.onQueued?.(reply.position, reply.others)
      if (this.finished) return
    }
    if (!this.listening) {
      this.listening = true
      // The engine may re-check at once (a wake-up for the key was heard
      // before): that ask is a repeat one, so what it sends is set above.
      this.io.want(this.hash)
      if (this.inFlight) return
    }
    if (this.again) {
      this.poll()
      return
    }
    this.floor = setTimeout(() => this.poll('floor'), Math.max(1, Math.floor(this.io.leaseMs / 3)))
    this.floor.unref()
  }

  /**
   * A reply for a call that no longer waits (it ended, or its ask timed
   * out): a key granted to it goes back, and a place it took in the line is
   * given up. The `leave` sent when it ended may have reached the storage
   * before this ask did (another connection of a pool, or an ask still
   * waiting in the process behind an earlier one) and found nothing; the
   * place would then be handed the key, and hold it for a lease.
   */
  private undo(reply: AcquireReply): void {
    if (reply.kind === 'granted') {
      const single = this.limit === 1
      this.io.releaseTo(
        { hash: this.hash, id: this.id, kind: 'plain', payload: '', single },
        IGNORED,
      )
    } else if (reply.kind === 'waiting') {
      this.leaveQueue()
    }
  }

  private leaveQueue(): void {
    if (this.mode === 'queue' || this.mode === 'latest') {
      // Unreachable: its place (or a key handed to it) expires within leaseMs.
      this.io.leave(this.hash, this.id, this.limit === 1).catch(() => {})
    }
  }

  private clearFloor(): void {
    if (this.floor !== undefined) clearTimeout(this.floor)
    this.floor = undefined
  }

  private forget(): void {
    if (this.listening) {
      this.listening = false
      this.io.unwant(this.hash)
    }
    this.registry.byId.delete(this.id)
    leaveGroup(this.registry.byHash, this.hash, this)
  }
}

const NONE: readonly string[] = Object.freeze([])
/** A release nobody waits for: unreachable, the lease expires by itself. */
const IGNORED: Answer<boolean> = { answered() {}, failed() {} }
