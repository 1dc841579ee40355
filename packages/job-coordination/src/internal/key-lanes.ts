import type { DispatchRequest, Task } from '@vega/job-core'
import type { CoordinationBinding } from './coordination-tag.js'
import { type Deferred, deferred } from './deferred.js'
import { Fifo } from './fifo.js'
import { KeyedStore } from './keyed-store.js'
import type { CoordinationScope, KeyState } from './scope.js'

/**
 * What a call does when its key's lane is full.
 * - `queue`: it waits its turn, in call order (serialize).
 * - `latest`: it waits, and a newer call supersedes it (keepLatest).
 */
export type WaitPolicy = 'queue' | 'latest'

/** One call as the kernel hands it to the coordinator: the lanes decide on it directly. */
type Call = DispatchRequest<CoordinationBinding>

/**
 * keepLatest's waiting call, and the answer its caller and every caller it
 * superseded receive: a superseded call's caller follows the newer call,
 * so the answer is one promise per waiting turn, not one per call.
 */
interface LatestTurn {
  call: Call
  readonly answer: Deferred<unknown>
}

/**
 * Who waits in one key's lane, made when its first call parks: a key whose
 * calls never meet costs none of it.
 */
class LaneWaiters {
  /** Parked calls of the current generation, by task id: the only ones released. */
  readonly parked = new Map<number, Call>()
  /** `queue`: the current generation in call order; entries that already left are skipped. */
  readonly order = new Fifo<Call>()
  /** `latest`: the one waiting call, if any. */
  latest: LatestTurn | undefined = undefined
  /** Parked calls of an abandoned generation: never released; they leave when their task ends, or at dispose. */
  readonly abandoned = new Map<number, Call>()
}

/**
 * One key's lane: how many admitted calls still have a body inside (or have
 * not ended yet), and who waits. A slot is given back when the call's task
 * has ended **and** its body has exited (the claim's exit hook), never at settle:
 * a cancelled or timed-out body that ignores its signal keeps its slot, so
 * two bodies of one key never overlap beyond the lane's concurrency.
 *
 * A parked call is its own waiter: the lane keeps the kernel's request in
 * `parked` (by task id) and, under `queue`, in call order in `order`; its
 * caller holds the task's own promise (`request.result`), so releasing it is
 * `proceed()` and nothing else. The claim's exit hook reaches the lane
 * through the call's key (nothing is registered per call): a task that
 * ends while still in `parked` or `abandoned` leaves the lane; any other
 * was admitted, and its exit frees a slot.
 */
class KeyLane implements KeyState {
  /** Admitted calls whose task is live or whose body is still inside. */
  inside = 0
  private waiters: LaneWaiters | undefined = undefined
  private pumping = false

  constructor(
    private readonly lanes: KeyLanes,
    private readonly scope: CoordinationScope,
    private readonly hash: string,
  ) {}

  /** A call of this lane ended and its body left: it frees its slot, or its place in the queue. */
  exited(task: Task<unknown>): void {
    const waiters = this.waiters
    const id = task.id
    if (waiters === undefined) {
      this.inside--
      this.pump()
    } else if (waiters.parked.delete(id)) {
      // Cancelled (or timed out) while parked: it leaves now rather than when reached.
      const turn = waiters.latest
      if (turn !== undefined && turn.call.task === task) {
        waiters.latest = undefined
        turn.answer.resolve(turn.call.result)
      }
      this.forgetIfIdle()
    } else if (waiters.abandoned.delete(id)) {
      this.forgetIfIdle()
    } else {
      this.inside--
      this.pump()
    }
  }

  /** Calls parked behind this key, of every generation (inspection). */
  get waiting(): number {
    const waiters = this.waiters
    return waiters === undefined ? 0 : waiters.parked.size + waiters.abandoned.size
  }

  get hasRoom(): boolean {
    return (
      (this.waiters === undefined || this.waiters.parked.size === 0) &&
      this.inside < this.lanes.concurrency
    )
  }

  admit(call: Call): Promise<unknown> {
    this.inside++
    return call.proceed()
  }

  park(call: Call): Promise<unknown> {
    const task = call.task
    call.park()
    const waiters = (this.waiters ??= new LaneWaiters())
    const position = waiters.parked.size
    waiters.parked.set(task.id, call)
    if (this.lanes.policy === 'queue') {
      waiters.order.push(call)
      this.emitQueued(call, position)
      // Its caller follows the task's own outcome, whichever way it ends.
      return call.result
    }
    const turn = waiters.latest
    if (turn === undefined) {
      const answer = deferred<unknown>()
      waiters.latest = { call, answer }
      this.emitQueued(call, 0)
      return answer.promise
    }
    // The newer call takes the turn; the one it supersedes ends, and its
    // caller already holds the turn's answer, which now follows the newer
    // call. Ended as the newer call's peer, not skipped: nobody needs the
    // superseded task's own promise, so none is made.
    const superseded = turn.call
    turn.call = call
    this.emitQueued(call, 0)
    call.cancelPeer(superseded.task, 'superseded')
    return turn.answer.promise
  }

  /** Releases waiters while there is room, then forgets the key if nothing is left. */
  pump(): void {
    const waiters = this.waiters
    // A released body may end and exit synchronously and re-enter; the loop picks up the slack.
    if (waiters !== undefined && !this.pumping) {
      this.pumping = true
      try {
        while (this.inside < this.lanes.concurrency && waiters.parked.size > 0) {
          const turn = waiters.latest
          if (turn !== undefined) {
            waiters.latest = undefined
            waiters.parked.delete(turn.call.task.id)
            this.inside++
            turn.answer.resolve(turn.call.proceed())
            continue
          }
          const call = waiters.order.shift()
          if (call === undefined) break
          // Gone from `parked`: it ended while parked, and left then.
          if (!waiters.parked.delete(call.task.id)) continue
          this.inside++
          call.proceed()
        }
      } finally {
        this.pumping = false
      }
    }
    if (!this.pumping) this.forgetIfIdle()
  }

  /** Moves every waiter to the abandoned generation: nobody releases them any more. */
  abandon(): void {
    const waiters = this.waiters
    if (waiters === undefined) return
    const turn = waiters.latest
    if (turn !== undefined) {
      // Never released now: its callers get its own ending, whenever it comes.
      waiters.latest = undefined
      turn.answer.resolve(turn.call.result)
    }
    for (const [id, call] of waiters.parked) waiters.abandoned.set(id, call)
    waiters.parked.clear()
    waiters.order.clear()
  }

  /** Skips every waiter, of every generation, with `reason`. */
  skipAll(reason: string): void {
    const waiters = this.waiters
    if (waiters !== undefined) {
      const turn = waiters.latest
      waiters.latest = undefined
      const calls = [...waiters.abandoned.values(), ...waiters.parked.values()]
      waiters.order.clear()
      for (const call of calls) {
        // Its exit callback takes it out of `parked` or `abandoned`.
        const skipped = call.skip(reason)
        if (turn !== undefined && turn.call === call) turn.answer.resolve(skipped)
      }
    }
    this.forgetIfIdle()
  }

  forgetIfIdle(): void {
    if (this.inside === 0 && this.waiting === 0) {
      this.lanes.store.delete(this.scope, this.hash, this)
    }
  }

  private emitQueued(call: Call, position: number): void {
    const bus = this.scope.host.events
    if (!bus.active) return
    bus.emit({
      type: 'coordination:queued',
      position,
      coordinator: call.binding.coordinator.name,
      intentId: call.task.id,
      hash: this.hash,
    })
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
  /** The call {@link refuse} is skipping: its exit, told during the skip, belongs to no lane. */
  private refusing: Task<unknown> | undefined = undefined

  constructor(
    readonly concurrency: number,
    readonly policy: WaitPolicy,
  ) {}

  /** The decision for one call: proceed when its lane has room, else park. */
  decide(scope: CoordinationScope, call: Call): Promise<unknown> {
    if (!this.hooked.has(scope)) this.hook(scope)
    const hash = call.binding.hash
    let lane = this.store.get(scope, hash)
    if (lane === undefined) {
      lane = new KeyLane(this, scope, hash)
      this.store.set(scope, hash, lane)
    }
    return lane.hasRoom ? lane.admit(call) : lane.park(call)
  }

  /**
   * Skips a call with `reason` without letting it into a lane (the
   * coordinator was disposed). A skipped call has no body, so its exit is
   * told during the skip, and is then no lane's to count.
   */
  refuse(call: Call, reason: string): Promise<never> {
    this.refusing = call.task
    try {
      return call.skip(reason)
    } finally {
      this.refusing = undefined
    }
  }

  /** The call `task` of key `hash` ended and its body left (the claim's exit hook, routed here). */
  exited(scope: CoordinationScope, task: Task<unknown>, hash: string): void {
    if (task === this.refusing) return
    this.store.get(scope, hash)?.exited(task)
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

  /** Skips every waiter of every scope (`dispose`). */
  skipAll(reason: string): void {
    for (const lane of this.store.values()) lane.skipAll(reason)
  }

  private hook(scope: CoordinationScope): void {
    this.hooked.add(scope)
    scope.host.onPreCancel(() => this.abandon(scope))
    scope.host.onShutdown((mode) => {
      if (mode === 'cancel') this.abandon(scope)
    })
  }
}
