import type {
  CancelReason,
  DispatchRequest,
  RunOptions,
  Task,
  TaskFn,
  TaskState,
} from '@vega/job-core'
import { CoordinationProtocolError } from '../errors.js'
import { type CoordinationEventDraft, isCoordinationEvent } from '../events.js'
import type { CoordinationContext, CoordinationIntent, Coordinator, SkipOptions } from '../types.js'
import type { CoordinationBinding } from './coordination-tag.js'
import { type Deferred, deferred, isThenable } from './deferred.js'
import { endingOf } from './ending.js'
import { Intent } from './intent.js'
import type { CoordinationScope } from './scope.js'

/**
 * How an intent was decided; `orphaned` and `failed` are the adapter's own
 * verdicts, `delegated` means a built-in took the decision over (see
 * {@link handOff}).
 */
type Decision = 'proceed' | 'reuse' | 'skip' | 'orphaned' | 'failed' | 'delegated'

/** What a built-in decides on when a coordinator delegates to it. */
export interface DelegatedIntent {
  readonly scope: CoordinationScope
  readonly request: DispatchRequest<CoordinationBinding>
}

/**
 * The adapter's side of one intent: the kernel's request, the decision and
 * the enforcement of the protocol around it. Never handed out: a coordinator
 * sees its {@link Coordination} alone.
 */
class Arbiter {
  readonly scope: CoordinationScope
  readonly request: DispatchRequest<CoordinationBinding>
  readonly coordinator: Coordinator
  readonly hash: string
  readonly context: Coordination
  decision: Decision | undefined = undefined
  /** The intent reached a terminal state before anyone decided (cancelled while parked, timeout). */
  endedUndecided = false
  /** Set when the coordinator returned a pending answer without deciding yet. */
  caller: Deferred<unknown> | undefined = undefined
  view: Intent | undefined = undefined
  /** `intent.parkCoordinator()` was called. */
  parked = false

  constructor(scope: CoordinationScope, request: DispatchRequest<CoordinationBinding>) {
    this.scope = scope
    this.request = request
    this.coordinator = request.binding.coordinator
    this.hash = request.binding.hash
    this.context = new Coordination(this)
  }

  /** Runs the coordinator on the context; what it returns is what the caller of `run()` receives. */
  run(): unknown {
    let answer: unknown
    const outer = deciding
    deciding = this
    try {
      answer = this.coordinator.coordinate(this.context)
    } catch (error) {
      if (this.undecided) this.fail(error)
      return Promise.reject(error)
    } finally {
      deciding = outer
    }
    if (!isThenable(answer)) {
      if (this.undecided) this.orphan()
      return answer
    }
    // Its coordinator may still hand it to a built-in, once its answer is on its way.
    if (this.decision === undefined) openArbiters.set(this.context, this)
    if (!this.undecided) return answer
    // Still live and undecided: its ending must reach the caller.
    if (!this.parked) this.watchUndecidedEnding()
    // Undecided with a pending answer (a parked waiter): the caller follows the
    // answer, unless the intent ends first, and the guard watches the answer.
    const caller = deferred<unknown>()
    this.caller = caller
    answer.then(
      (value) => {
        if (this.undecided) this.orphan()
        caller.resolve(value)
      },
      (error: unknown) => {
        if (this.undecided) this.fail(error)
        caller.reject(error)
      },
    )
    return caller.promise
  }

  /** A built-in (`who`) takes the decision over; the context counts as decided. */
  handOff(who: string): DelegatedIntent {
    const name = this.coordinator.name
    if (this.parked && this.decision === undefined) {
      // Parked by the delegating coordinator: the built-in parks (and indexes) a call itself.
      throw new CoordinationProtocolError(
        `${name}: ${who}.coordinate(ctx) after intent.parkCoordinator(); hand the intent to a built-in before parking it (the built-in parks it when it must wait).`,
        name,
        this.request.task.id,
      )
    }
    this.decide('delegated', `${who}.coordinate(ctx)`)
    return this
  }

  get intent(): CoordinationIntent {
    this.view ??= new Intent(
      this.request.task,
      (reason, options) => this.skip(reason, options),
      () => this.park(),
      (error) => {
        if (this.undecided) this.fail(error)
        else this.request.fail(error)
      },
    )
    return this.view
  }

  peers(): Task<unknown>[] {
    return this.scope.peersOf(this.request.binding, this.request.task)
  }

  proceed(): Promise<unknown> {
    this.decide('proceed', 'proceed()')
    return this.request.proceed()
  }

  reuse(peer: Task<unknown>): Promise<unknown> {
    const name = this.coordinator.name
    if (!isTask(peer)) {
      throw new TypeError(
        `${name}: reuse(peer) needs a task, e.g. one from ctx.peers(); got ${peer === null ? 'null' : typeof peer}.`,
      )
    }
    if (peer.id === this.request.task.id) {
      throw new TypeError(
        `${name}: reuse(peer) cannot reuse the intent itself; pick a peer from ctx.peers().`,
      )
    }
    this.decide('reuse', 'reuse(peer)')
    if (this.scope.host.events.active) this.emit({ type: 'coordination:reuse', peerId: peer.id })
    return this.request.follow(peer, 'dedupe')
  }

  cancelPeer(peer: Task<unknown>, reason: CancelReason = 'abort'): void {
    const name = this.coordinator.name
    if (!isTask(peer)) {
      throw new TypeError(`${name}: cancelPeer(peer) needs a task, e.g. one from ctx.peers().`)
    }
    if (peer.id === this.request.task.id) {
      throw new TypeError(
        `${name}: cancelPeer(peer) cannot cancel the intent; use ctx.intent.skip(reason).`,
      )
    }
    if (typeof reason !== 'string' || reason === '') {
      throw new TypeError(
        `${name}: cancelPeer(peer, reason): reason must be a non-empty string such as 'abort'.`,
      )
    }
    this.request.cancelPeer(peer, reason)
  }

  emit(draft: CoordinationEventDraft): void {
    if (draft === null || typeof draft !== 'object' || !isCoordinationEvent(draft)) {
      throw new TypeError(
        `${this.coordinator.name}: ctx.emit() only takes the coordination:* diagnostics; emit custom events with getEventBus(runtime).emit(…).`,
      )
    }
    const bus = this.scope.host.events
    if (!bus.active) return
    bus.emit({
      ...draft,
      coordinator: this.coordinator.name,
      intentId: this.request.task.id,
      hash: this.hash,
    })
  }

  /** Should the intent end while still undecided, its caller must learn it (see {@link intentSettled}). */
  private watchUndecidedEnding(): void {
    this.scope.whenEndsUndecided(this.request.task, () => this.intentSettled())
  }

  private skip(reason: CancelReason, options?: SkipOptions): Promise<never> {
    if (typeof reason !== 'string' || reason === '') {
      throw new TypeError(
        `${this.coordinator.name}: intent.skip(reason): reason must be a non-empty string such as 'exhaust-dropped'.`,
      )
    }
    this.decide('skip', 'intent.skip(reason)')
    return this.request.skip(reason, toSkipOptions(options))
  }

  private park(): void {
    const name = this.coordinator.name
    const task = this.request.task
    if (this.decision !== undefined) {
      throw new CoordinationProtocolError(
        `${name}: intent.parkCoordinator() after the intent was decided (${this.decision}); park first, decide later.`,
        name,
        task.id,
      )
    }
    // Racing a cancellation is normal: parking a task that already ended does nothing.
    if (this.endedUndecided) return
    const state: TaskState = task.state
    if (state !== 'idle') {
      throw new CoordinationProtocolError(
        `${name}: intent.parkCoordinator() on a task that is ${state}; park once, while it is idle.`,
        name,
        task.id,
      )
    }
    this.parked = true
    this.watchUndecidedEnding()
    this.request.park()
  }

  /** The orphan guard: the answer settled and nobody decided. */
  private orphan(): void {
    this.decision = 'orphaned'
    this.emit({ type: 'coordination:orphaned-intent' })
    this.request.skip('orphaned-intent')
  }

  private fail(error: unknown): void {
    this.decision = 'failed'
    this.request.fail(error)
  }

  /** The intent reached a terminal state (called synchronously by the scope). */
  private intentSettled(): void {
    if (this.decision !== undefined) return
    this.endedUndecided = true
    const caller = this.caller
    if (caller === undefined) return
    // The coordinator still holds a pending answer for a task that is over:
    // the caller must not wait on it, so it gets the task's own ending.
    caller.resolve(endingOf(this.request.task))
  }

  private get undecided(): boolean {
    return this.decision === undefined && !this.endedUndecided
  }

  private decide(decision: Decision, what: string): void {
    const previous = this.decision
    if (previous === undefined) {
      this.decision = decision
      return
    }
    const why =
      previous === 'orphaned'
        ? 'the orphan guard already skipped it (its coordinator returned before deciding)'
        : previous === 'failed'
          ? 'its coordinator already failed it'
          : previous === 'delegated'
            ? 'it was handed to a built-in coordinator, which decides it'
            : `it was already decided with ${previous}`
    const name = this.coordinator.name
    throw new CoordinationProtocolError(
      `${name}: ${what} on task #${this.request.task.id}, but ${why}. ` +
        'Decide each intent exactly once: proceed(), reuse(peer) or intent.skip(reason).',
      name,
      this.request.task.id,
    )
  }
}

// How a built-in handed a context (`handOff`) finds the arbiter behind it,
// without a member of the context: a coordinator holding `ctx` must reach
// neither the scope, the runtime nor the decision. A hand-off happens while
// the delegating coordinator runs (`deciding`, a stack through `outer`) or,
// for a coordinator that answered with a promise before deciding, later:
// only those contexts enter the WeakMap, since a WeakMap entry per call
// costs the protocol path about a third of its time (`bench/README.md`).
let deciding: Arbiter | undefined
const openArbiters = new WeakMap<object, Arbiter>()

/**
 * The context of one intent, as its coordinator sees it: the members of
 * {@link CoordinationContext} and nothing else. Its one field is private
 * (`#`) and the object is frozen, so a coordinator can neither reach nor
 * overwrite the arbiter behind it.
 */
class Coordination implements CoordinationContext {
  readonly #arbiter: Arbiter

  constructor(arbiter: Arbiter) {
    this.#arbiter = arbiter
    Object.freeze(this)
  }

  get hash(): string {
    return this.#arbiter.hash
  }

  get taskFn(): TaskFn<unknown> {
    return this.#arbiter.request.taskFn
  }

  get options(): RunOptions {
    return this.#arbiter.request.options
  }

  get task(): Task<unknown> {
    return this.#arbiter.request.task
  }

  get intent(): CoordinationIntent {
    return this.#arbiter.intent
  }

  peers(): Task<unknown>[] {
    return this.#arbiter.peers()
  }

  proceed(): Promise<unknown> {
    return this.#arbiter.proceed()
  }

  reuse(peer: Task<unknown>): Promise<unknown> {
    return this.#arbiter.reuse(peer)
  }

  cancelPeer(peer: Task<unknown>, reason?: CancelReason): void {
    this.#arbiter.cancelPeer(peer, reason)
  }

  emit(draft: CoordinationEventDraft): void {
    this.#arbiter.emit(draft)
  }
}

/**
 * Runs `binding.coordinator` for one intent and enforces the protocol. Its
 * return value is what the caller of `run()` receives as `task.promise`.
 */
export function dispatchToCoordinator(
  scope: CoordinationScope,
  request: DispatchRequest<CoordinationBinding>,
): unknown {
  // Every call a coordinator is asked about is a peer of the later ones,
  // from now until it settles (the claim's settle hook takes it out).
  scope.track(request.binding, request.task)
  const strategy = request.binding.strategy
  if (strategy !== undefined) return strategy.decide(scope, request)
  return new Arbiter(scope, request).run()
}

/**
 * Hands the intent behind `ctx` to a built-in (`who`), which then decides on
 * the kernel's request itself, exactly as when it is bound directly: the
 * context counts as decided, so a second decision through it throws. A
 * `TypeError` for a context not made by the adapter.
 */
export function handOff(ctx: CoordinationContext, who: string): DelegatedIntent {
  const arbiter =
    deciding !== undefined && deciding.context === ctx
      ? deciding
      : ctx !== null && typeof ctx === 'object'
        ? openArbiters.get(ctx)
        : undefined
  if (arbiter === undefined) {
    if (ctx instanceof Coordination) {
      // The adapter's context, decided before its coordinator returned.
      throw new CoordinationProtocolError(
        `${who}.coordinate(ctx) on task #${ctx.task.id}, after its coordinator had decided it and returned. Hand the intent to a built-in instead of deciding it.`,
        who,
        ctx.task.id,
      )
    }
    throw new TypeError(
      `${who} keeps per-runtime state and only runs inside a runtime: createRuntime({ plugins: [installCoordination] }).`,
    )
  }
  return arbiter.handOff(who)
}

function isTask(value: unknown): value is Task<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Task<unknown>).id === 'number' &&
    typeof (value as Task<unknown>).cancel === 'function'
  )
}

function toSkipOptions(
  options: SkipOptions | undefined,
): { cancelledBy?: number; cause?: unknown } | undefined {
  if (options === undefined) return undefined
  if (options === null || typeof options !== 'object') {
    throw new TypeError('intent.skip(reason, options): options must be { cancelledBy?, cause? }.')
  }
  return options
}
