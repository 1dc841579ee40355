import { type DispatchRequest, isTerminalState, type Task } from '@vega/job-core'
import type { CoordinationBinding } from './coordination-tag.js'
import { type Deferred, deferred } from './deferred.js'
import { Fifo } from './fifo.js'
import { KeyedStore } from './keyed-store.js'
import { LaneSlots } from './lane-slots.js'
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
  /**
   * `queue`: the current generation in call order. A call that ended while
   * parked is not searched for: it is counted out of {@link queued} at once
   * and skipped when the front reaches it, and the queue is cut down to its
   * live calls once most of it has left.
   */
  readonly order = new Fifo<Call>()
  /** `latest`: the one waiting call, if any. */
  latest: LatestTurn | undefined = undefined
  /** Live parked calls of the current generation (`order`'s live calls, or the latest turn): the only ones released. */
  queued = 0
  /** Parked calls of an abandoned generation, by task id: never released; they leave when their task ends, or at dispose. */
  readonly abandoned = new Map<number, Call>()

  /** The live calls of the current generation, in call order. */
  current(): Call[] {
    const calls = this.order.toArray().filter(isWaiting)
    if (this.latest !== undefined) calls.push(this.latest.call)
    return calls
  }
}

/** A parked call not decided since (a call that ended while parked is decided). */
function isWaiting(call: Call): boolean {
  return !call.decided
}

/**
 * One key's lane: its admitted calls that still have a body inside (or have
 * not ended yet), and who waits. A slot is given back when the call's task
 * has ended **and** its body has exited (the claim's exit hook), never at settle:
 * a cancelled or timed-out body that ignores its signal keeps its slot, so
 * two bodies of one key never overlap beyond the lane's concurrency.
 *
 * A parked call is its own waiter: the lane keeps the kernel's request, under
 * `queue` in call order in `order`; its caller holds the task's own promise
 * (`request.result`), so releasing it is `proceed()` and nothing else. The
 * claim's exit hook reaches the lane through the call's key (nothing is
 * registered per call); a call that ends and is not one of the admitted
 * ones was still parked, and leaves the lane at once.
 */
export class KeyLane implements KeyState {
  /**
   * Admitted calls whose task is live or whose body is still inside: the
   * lane's slots. A call is here from just before its `proceed()` (it may
   * end, and exit, before that returns) until its exit.
   */
  private readonly admitted: LaneSlots
  private waiters: LaneWaiters | undefined = undefined
  private pumping = false
  readonly lanes: KeyLanes
  /** The scope whose store holds this lane; `undefined` once it is idle and forgotten. */
  scope: CoordinationScope | undefined
  private readonly hash: string

  constructor(lanes: KeyLanes, scope: CoordinationScope, hash: string) {
    this.lanes = lanes
    this.scope = scope
    this.hash = hash
    this.admitted = new LaneSlots(lanes.concurrency)
  }

  /** A call of this lane ended and its body left: it frees its slot, or its place in the queue. */
  exited(task: Task<unknown>): void {
    if (this.admitted.delete(task)) {
      this.pump()
      return
    }
    const waiters = this.waiters!
    if (waiters.abandoned.size !== 0 && waiters.abandoned.delete(task.id)) {
      this.forgetIfIdle()
      return
    }
    // Cancelled (or timed out) while parked: it leaves now rather than when reached.
    waiters.queued--
    const turn = waiters.latest
    if (turn !== undefined && turn.call.task === task) {
      waiters.latest = undefined
      turn.answer.resolve(turn.call.result)
    }
    const order = waiters.order
    if (waiters.queued === 0) order.clear()
    else if (order.length > 32 && order.length > 2 * waiters.queued) order.retain(isWaiting)
    this.forgetIfIdle()
  }

  /** Appends the lane's live calls: admitted ones that have not ended, and every waiter. */
  collectLive(into: Task<unknown>[]): void {
    const calls = this.admitted.toArray()
    const waiters = this.waiters
    if (waiters !== undefined) {
      for (const call of waiters.current()) calls.push(call.task)
      for (const call of waiters.abandoned.values()) calls.push(call.task)
    }
    // An admitted call keeps its slot after it ends, until its body leaves.
    for (const task of calls) if (!isTerminalState(task.state)) into.push(task)
  }

  /** Calls parked behind this key, of every generation (inspection). */
  get waiting(): number {
    const waiters = this.waiters
    return waiters === undefined ? 0 : waiters.queued + waiters.abandoned.size
  }

  get hasRoom(): boolean {
    return (
      (this.waiters === undefined || this.waiters.queued === 0) &&
      this.admitted.size < this.lanes.concurrency
    )
  }

  admit(call: Call): Promise<unknown> {
    this.admitted.add(call.task)
    return call.proceed()
  }

  park(call: Call): Promise<unknown> {
    call.park()
    const waiters = (this.waiters ??= new LaneWaiters())
    const position = waiters.queued
    waiters.queued++
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
        while (this.admitted.size < this.lanes.concurrency && waiters.queued > 0) {
          const turn = waiters.latest
          if (turn !== undefined) {
            waiters.latest = undefined
            waiters.queued--
            turn.answer.resolve(this.admit(turn.call))
            continue
          }
          const call = waiters.order.shift()
          if (call === undefined) break
          // Ended while parked: it left then.
          if (!isWaiting(call)) continue
          waiters.queued--
          this.admit(call)
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
    for (const call of waiters.current()) waiters.abandoned.set(call.task.id, call)
    const turn = waiters.latest
    if (turn !== undefined) {
      // Never released now: its callers get its own ending, whenever it comes.
      waiters.latest = undefined
      turn.answer.resolve(turn.call.result)
    }
    waiters.order.clear()
    waiters.queued = 0
  }

  /** Skips every waiter, of every generation, with `reason`. */
  skipAll(reason: string): void {
    const waiters = this.waiters
    if (waiters !== undefined) {
      const calls = [...waiters.abandoned.values(), ...waiters.current()]
      const turn = waiters.latest
      waiters.latest = undefined
      for (const call of calls) {
        // Its exit takes it out of `abandoned`, or out of the current generation's count.
        const skipped = call.skip(reason)
        if (turn !== undefined && turn.call === call) turn.answer.resolve(skipped)
      }
    }
    this.forgetIfIdle()
  }

  forgetIfIdle(): void {
    const scope = this.scope
    if (scope !== undefined && this.admitted.size === 0 && this.waiting === 0) {
      this.lanes.store.delete(scope, this.hash, this)
      this.scope = undefined
    }
  }

  private emitQueued(call: Call, position: number): void {
    const bus = this.scope!.host.events
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
    const binding = call.binding
    let lane = this.laneOf(scope, binding)
    if (lane === undefined) {
      // A scope holding a lane is hooked already.
      if (!this.hooked.has(scope)) this.hook(scope)
      lane = new KeyLane(this, scope, binding.hash)
      this.store.set(scope, binding.hash, lane)
      binding.lane = lane
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

  /** The call `task` of `binding` ended and its body left (the claim's exit hook, routed here). */
  exited(scope: CoordinationScope, task: Task<unknown>, binding: CoordinationBinding): void {
    if (task === this.refusing) return
    this.laneOf(scope, binding)?.exited(task)
  }

  /** The live lane of `binding`'s key in `scope`: the one the binding remembers while it is current, else looked up (and remembered). */
  private laneOf(scope: CoordinationScope, binding: CoordinationBinding): KeyLane | undefined {
    const remembered = binding.lane
    if (remembered !== undefined && remembered.lanes === this && remembered.scope === scope) {
      return remembered
    }
    const lane = this.store.get(scope, binding.hash)
    if (lane !== undefined) binding.lane = lane
    return lane
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
