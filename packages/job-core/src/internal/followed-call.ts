import { IllegalStateError } from '../errors.js'
import type { CancelReason, Task, TaskFn, TaskState } from '../types/task.js'
import type { TaskBindings } from './bindings.js'
import { CancelledOutcome } from './cancelled-outcome.js'
import type { ResolvedRunOptions, RuntimeCore } from './model.js'
import { handleRecord, refuseCancelArguments } from './task-handle.js'
import { TaskRecord } from './task-record.js'

let readFollowed: (value: object) => TaskRecord | undefined

/** The body of a followed call's record: it was merged, so nothing ever calls it. */
const neverRuns: TaskFn<unknown> = () => {
  throw new IllegalStateError('A merged call never runs its body.')
}

/**
 * The records made for followed calls, kept off the object: few callers ever
 * ask for one, so no call carries a field (and an initializer) for it.
 */
const records = new WeakMap<FollowedCall<unknown>, TaskRecord>()

/**
 * A call a plugin merged into a live peer before its task was built (see
 * `ClaimOptions.followPeer`): a task born `cancelled`, whose promise is the
 * peer's. It reads as any task merged by `request.follow` does; the record
 * the rest of the kernel works on is made only if someone asks for it
 * (`settle`, `dependsOn`, a plugin's `onSettled`), which a merged call's
 * caller rarely does. A burst of calls on one key thus costs a lookup and
 * this object each, not a pipeline.
 */
/** Refuses a handle made outside the kernel (`new task.constructor(…)`): `settle()` trusts it. */
const MADE_BY_KERNEL: unique symbol = Symbol('FollowedCall')

export class FollowedCall<T> implements Task<T> {
  readonly #id: number
  readonly #cancelledBy: number
  readonly #reason: CancelReason
  readonly #promise: Promise<T>
  /**
   * The tags of the call's taskFn, not the taskFn: a plugin may still ask
   * whether it owns the call, but its body never runs, so a function tagged
   * per call is not kept while the peer runs.
   */
  readonly #bindings: TaskBindings
  readonly #options: ResolvedRunOptions

  // Made here, not as a private method: a class with private methods gives
  // every instance a brand slot, one field more per merged call.
  static {
    readFollowed = (value) => {
      if (!(#id in value)) return undefined
      const call = value as FollowedCall<unknown>
      const made = records.get(call)
      if (made !== undefined) return made
      // The ended record of this call, made on first request and kept.
      const id = call.#id
      const task = new TaskRecord(neverRuns, call.#bindings, call.#options, id)
      task.handle = call
      task.state = 'cancelled'
      task.outcome = new CancelledOutcome(call.#reason, id, call.#cancelledBy, undefined)
      task.caller = call.#promise
      task.observed = true
      records.set(call, task)
      return task
    }
  }

  constructor(
    made: typeof MADE_BY_KERNEL,
    core: RuntimeCore,
    bindings: TaskBindings,
    options: ResolvedRunOptions,
    peer: TaskRecord,
    reason: CancelReason,
  ) {
    this.#id = core.nextTaskId++
    this.#bindings = bindings
    this.#options = options
    this.#cancelledBy = peer.id
    this.#reason = reason
    if (made !== MADE_BY_KERNEL) {
      throw new TypeError('A Task is made by run(); it has no public constructor.')
    }
    // Read now, as request.follow reads it: the peer is observed from here on.
    this.#promise = peer.handle.promise as Promise<T>
    Object.freeze(this)
  }

  get id(): number {
    return this.#id
  }

  get cancelReason(): CancelReason {
    return this.#reason
  }

  get cancelledBy(): number {
    return this.#cancelledBy
  }

  get label(): string | undefined {
    return this.#options.label
  }

  get state(): TaskState {
    return 'cancelled'
  }

  get attempt(): number {
    return 0
  }

  get promise(): Promise<T> {
    return this.#promise
  }

  // biome-ignore lint/suspicious/noThenProperty: a Task is a thenable by design (await run(...)).
  then<R1 = T, R2 = never>(
    onFulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onRejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#promise.then(onFulfilled, onRejected)
  }

  catch<R = never>(onRejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.#promise.catch(onRejected)
  }

  finally(onFinally?: (() => void) | null): Promise<T> {
    return this.#promise.finally(onFinally)
  }

  /** Already terminal: nothing to cancel, as for any ended task. */
  cancel(...unexpected: unknown[]): void {
    refuseCancelArguments(unexpected)
  }
}
Object.freeze(FollowedCall.prototype)

/**
 * Merges the call (of a taskFn with `layers`) into the peer its plugin
 * names, when nothing but the handler could tell the difference (see
 * `ClaimOptions`); `undefined` sends the call down the pipeline.
 */
export function followedCall(
  core: RuntimeCore,
  layers: TaskBindings | undefined,
  options: ResolvedRunOptions,
): Task<unknown> | undefined {
  if (core.bus.active || core.shutdown !== undefined || options.signal !== undefined) {
    return undefined
  }
  if (layers === undefined || layers.inner !== undefined) return undefined
  const claim = core.claims.get(layers.tag)
  const followPeer = claim?.followPeer
  if (followPeer === undefined) return undefined
  const peer = handleRecord(followPeer(layers.binding))
  // A peer of another runtime is the handler's to refuse, as request.follow
  // does; a peer that is itself a followed call goes the long way too.
  if (peer === undefined || peer.core !== core) return undefined
  return new FollowedCall(MADE_BY_KERNEL, core, layers, options, peer, claim!.followReason)
}

/** The record behind a followed call (made on first request); `undefined` for any other value. */
export function followedRecord(value: object): TaskRecord | undefined {
  return readFollowed(value)
}
