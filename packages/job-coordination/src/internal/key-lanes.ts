import type { Task } from '@vega/job-core'
import type { CoordinationContext } from '../types.js'
import { internalsOf } from './coordination-context.js'
import { type Deferred, deferred } from './deferred.js'
import { endingOf } from './ending.js'
import { KeyedStore } from './keyed-store.js'
import { LinkedList } from './linked-list.js'
import type { CoordinationScope, KeyState } from './scope.js'

/**
 * What a call does when its key's lane is full.
 * - `queue`: it waits its turn, in call order (serialize).
 * - `latest`: it waits, and a newer call supersedes it (keepLatest).
 */
export type WaitPolicy = 'queue' | 'latest'

/** A parked call and the answer its coordinator returned to the caller. */
export interface Waiter {
  readonly ctx: CoordinationContext
  readonly task: Task<unknown>
  readonly answer: Deferred<unknown>
}

/**
 * One key's lane: how many admitted calls still have a body inside (or have
 * not ended yet), and who waits. A slot is given back when the call's task
 * has ended **and** its body has exited (`host.onExited`), never at settle:
 * a cancelled or timed-out body that ignores its signal keeps its slot, so
 * two bodies of one key never overlap beyond the lane's concurrency.
 */
class KeyLane implements KeyState {
  /** Admitted calls whose task is live or whose body is still inside. */
  inside = 0
  /** The current generation's waiters, in call order: the only ones released. */
  readonly waiters: LinkedList<Waiter> = new LinkedList()
  /** Waiters of an abandoned generation: never released; they leave when their task ends, or at dispose. */
  readonly abandoned: LinkedList<Waiter> = new LinkedList()
  private pumping = false
  /** One callback per lane, not per call: an exit only needs to free a slot. */
  private readonly exited: () => void

  constructor(
    private readonly lanes: KeyLanes,
    private readonly scope: CoordinationScope,
    private readonly hash: string,
  ) {
    this.exited = () => {
      this.inside--
      this.pump()
    }
  }

  get waiting(): number {
    return this.waiters.size + this.abandoned.size
  }

  get hasRoom(): boolean {
    return this.waiters.size === 0 && this.inside < this.lanes.concurrency
  }

  admit(ctx: CoordinationContext, task: Task<unknown>): Promise<unknown> {
    this.inside++
    this.scope.host.onExited(task, this.exited)
    return ctx.proceed()
  }

  park(ctx: CoordinationContext, task: Task<unknown>): Promise<unknown> {
    ctx.intent.parkCoordinator()
    const answer = deferred<unknown>()
    const superseded = this.lanes.policy === 'latest' ? this.waiters.shift() : undefined
    const position = this.waiters.size
    const node = this.waiters.push({ ctx, task, answer })
    this.scope.host.onSettled(task, () => {
      // Cancelled (or timed out) while parked: leave now rather than when
      // reached, and settle the answer as the task ended.
      if (!this.waiters.remove(node) && !this.abandoned.remove(node)) return
      this.forgetIfIdle()
      answer.resolve(endingOf(task))
    })
    ctx.emit({ type: 'coordination:queued', position })
    if (superseded !== undefined) {
      // Its caller follows the newer call; the first settle wins, so answer before skipping.
      superseded.answer.resolve(answer.promise)
      superseded.ctx.intent.skip('superseded', { cancelledBy: task.id })
    }
    return answer.promise
  }

  /** Releases waiters while there is room, then forgets the key if nothing is left. */
  pump(): void {
    // A released body may end and exit synchronously and re-enter; the loop picks up the slack.
    if (this.pumping) return
    this.pumping = true
    try {
      while (this.inside < this.lanes.concurrency && this.waiters.size > 0) {
        const waiter = this.waiters.shift()!
        waiter.answer.resolve(this.admit(waiter.ctx, waiter.task))
      }
    } finally {
      this.pumping = false
    }
    this.forgetIfIdle()
  }

  /** Moves every waiter to the abandoned generation: nobody releases them any more. */
  abandon(): void {
    this.waiters.moveAllTo(this.abandoned)
  }

  /** Takes every waiter, of every generation, out of the lane. */
  drain(): Waiter[] {
    const taken = [...this.abandoned.drain(), ...this.waiters.drain()]
    this.forgetIfIdle()
    return taken
  }

  forgetIfIdle(): void {
    if (this.inside === 0 && this.waiters.size === 0 && this.abandoned.size === 0) {
      this.lanes.store.delete(this.scope, this.hash, this)
    }
  }
}

/**
 * The per-key lanes of one stateful coordinator (a serialize or keepLatest
 * instance), in every runtime it serves. In each runtime it registers, once,
 * a pre-cancel hook and a shutdown listener that abandon the waiters before
 * anything is cancelled, so a slot freed by the cancel never starts a waiter
 * on the way out.
 */
export class KeyLanes {
  readonly store: KeyedStore<KeyLane> = new KeyedStore()
  private readonly hooked = new WeakSet<CoordinationScope>()

  constructor(
    /** Who to name when a context was not made by the runtime. */
    private readonly who: string,
    readonly concurrency: number,
    readonly policy: WaitPolicy,
  ) {}

  /** The decision for one intent: proceed when its lane has room, else park. */
  coordinate(ctx: CoordinationContext): Promise<unknown> {
    const { scope, task } = internalsOf(ctx, this.who)
    if (!this.hooked.has(scope)) this.hook(scope)
    let lane = this.store.get(scope, ctx.hash)
    if (lane === undefined) {
      lane = new KeyLane(this, scope, ctx.hash)
      this.store.set(scope, ctx.hash, lane)
    }
    return lane.hasRoom ? lane.admit(ctx, task) : lane.park(ctx, task)
  }

  /**
   * Abandons the waiters of `scope` (or of every scope). Slots are kept: a
   * body still inside holds its slot, and the next call waits for it.
   */
  abandon(scope?: CoordinationScope): void {
    for (const lane of this.store.values(scope)) {
      lane.abandon()
      lane.forgetIfIdle()
    }
  }

  /** Takes every waiter of every scope out of its lane. */
  drain(): Waiter[] {
    const taken: Waiter[] = []
    for (const lane of this.store.values()) taken.push(...lane.drain())
    return taken
  }

  private hook(scope: CoordinationScope): void {
    this.hooked.add(scope)
    scope.host.onPreCancel(() => this.abandon(scope))
    scope.host.onShutdown((mode) => {
      if (mode === 'cancel') this.abandon(scope)
    })
  }
}
