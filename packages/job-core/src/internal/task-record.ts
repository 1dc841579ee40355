import type { BackendJob } from '../backend.js'
import { IllegalStateError } from '../errors.js'
import type { Outcome, Task, TaskFn } from '../task.js'
import type { TaskState } from '../task-state.js'
import { type AttemptCarrier, AttemptJob, startAttempt } from './attempt-job.js'
import { JOB_BINDINGS, type TaskBindings, withLayers } from './bindings.js'
import { adoptOwn } from './caller-promise.js'
import { countMove } from './counters.js'
import type { ResolvedRunOptions } from './run-options.js'
import type { RuntimeCore } from './runtime-core.js'
import { sinceOffsetAt } from './since-offset.js'
import { FIRST_TERMINAL, LEGAL_NEXT, STATE_NAMES, stateIndexOf } from './state-index.js'
import type { TaskCallback, TaskExtras } from './task-extras.js'
import { TaskWord } from './task-word.js'
import { deliverTransition, type TransitionExtra } from './transition-event.js'

/**
 * A task's data and its state machine, nothing else: the pipeline's stages
 * act on it, `moveTo` is the only way its state changes. Hot fields live
 * here; what few tasks need (children, callbacks, timers of parked stages)
 * lives in `extras`, allocated on first use.
 */
export class TaskRecord extends TaskWord implements BackendJob {
  readonly id: number
  /**
   * The function the body runs: the taskFn passed to `run()` without its
   * tags. With `bindings`, all the task keeps of that taskFn: a tagged
   * function made per call (a bind per message on the aggregate path, 88 B)
   * is not held while the task waits.
   */
  readonly body: TaskFn<unknown>
  /** The tags of the taskFn, outermost first; `undefined` for a plain function. */
  readonly bindings: TaskBindings | undefined
  readonly options: ResolvedRunOptions
  /** What the caller holds: set once, right after construction. */
  handle!: Task<unknown>
  /**
   * Clock time of the last transition (devtools snapshots show how long a
   * task has waited), kept relative to the runtime's first clock reading: a
   * small integer stays unboxed, an epoch reading would be a heap number per
   * transition.
   */
  sinceOffset: number | undefined
  livePrev: TaskRecord | undefined = undefined
  liveNext: TaskRecord | undefined = undefined
  /** The task's own result as a promise: made at once for a task that waits, else on first use. */
  own: Promise<unknown> | undefined = undefined
  resolveOwn: ((value: unknown) => void) | undefined = undefined
  /** What the caller receives instead of the own promise: a dispatch handler's answer, a shaper burst's promise. */
  caller: Promise<unknown> | undefined = undefined
  /**
   * `carrier`, `job` or `outcome` (accessors below), which a task never
   * needs at once: a task waits with a carrier and no attempt; an attempt,
   * once made, takes the carrier over until its body enters; an ended task
   * has neither, only its outcome. One slot for three, 16 B less per task.
   */
  private pending: AttemptJob | AttemptCarrier | Outcome<unknown> | undefined = undefined
  /**
   * `extras` (made on first use), or, while a task needs nothing else from
   * it, its one settle callback as it is: a plugin that only wants to hear
   * of the ending (a dedupe leader's scope) costs no extras object (104 B).
   * Read and written through `task-extras.ts`.
   */
  extrasSlot: TaskExtras | TaskCallback | undefined = undefined

  /**
   * `body` and `bindings` are a taskFn's (see {@link bodyOf}). `id` is given
   * only for a call that already has one (a followed call's record, made
   * late).
   */
  constructor(
    body: TaskFn<unknown>,
    bindings: TaskBindings | undefined,
    options: ResolvedRunOptions,
    id: number = options.core.nextTaskId++,
  ) {
    super()
    this.id = id
    this.body = body
    this.bindings = bindings
    this.options = options
    // Read by createTask, and only for a task someone may see: one that
    // ends inside run() with nobody listening never pays for the clock.
    this.sinceOffset = undefined
  }

  /** What only some tasks need; `undefined` while the task has none (or only a lone settle callback). */
  get extras(): TaskExtras | undefined {
    const slot = this.extrasSlot
    return typeof slot === 'function' ? undefined : slot
  }

  /** The runtime: its options know it (see `ResolvedRunOptions.core`). */
  get core(): RuntimeCore {
    return this.options.core
  }

  /**
   * How the task ended; `undefined` while it is live. Set once, right after
   * the terminal transition (see `finish`).
   */
  get outcome(): Outcome<unknown> | undefined {
    return this.ended ? (this.pending as Outcome<unknown> | undefined) : undefined
  }

  set outcome(outcome: Outcome<unknown>) {
    if (!this.ended) {
      throw new IllegalStateError(
        `Task #${this.id}: an outcome set while the task is ${this.state}.`,
      )
    }
    this.pending = outcome
  }

  /** The attempt that waits for a slot or whose body runs and still decides the task. */
  get job(): AttemptJob | undefined {
    return this.holdsAttempt ? (this.pending as AttemptJob) : undefined
  }

  /** Clearing (`undefined`) lets go of an attempt, never of a carrier or an outcome. */
  set job(job: AttemptJob | undefined) {
    if (job !== undefined || this.holdsAttempt) {
      this.pending = job
      this.holdsAttempt = job !== undefined
    }
  }

  /** `job` decides the task: a compare, where the `job` accessor would test the slot's class. */
  holds(job: AttemptJob): boolean {
    return this.pending === job
  }

  /**
   * The async context of `run()` (or of a failed attempt, for a retry) while
   * no attempt holds it: a snapshot, or a promise door. Set only while the
   * task has no attempt.
   */
  get carrier(): AttemptCarrier | undefined {
    return this.holdsAttempt || this.ended
      ? undefined
      : (this.pending as AttemptCarrier | undefined)
  }

  set carrier(carrier: AttemptCarrier | undefined) {
    if (!this.holdsAttempt && !this.ended) this.pending = carrier
    else if (carrier !== undefined) {
      throw new IllegalStateError(
        `Task #${this.id}: a carrier set while it has an attempt or has ended.`,
      )
    }
  }

  /**
   * A taskFn equivalent to the one passed to `run()`: itself when it carries
   * no tag, else one rebuilt from `body` and `bindings` on each read (same
   * body, same tags, another function).
   */
  get taskFn(): TaskFn<unknown> {
    const bindings = this.bindings
    return bindings === undefined ? this.body : withLayers(this.body, bindings)
  }

  /**
   * Clock time of the last transition. Asked before the task's first
   * transition (inspect() from a dispatch handler, while the task is still
   * being created), it is now: the task is this very call's.
   */
  get since(): number {
    const offset = this.sinceOffset
    return offset === undefined ? this.core.clock.now() : this.core.clockOrigin + offset
  }

  /** The key hash a binding gave the task, if any (the outermost binding with one wins). */
  get key(): string | undefined {
    for (let layer = this.bindings; layer !== undefined; layer = layer.inner) {
      const key = layer.tag.key?.(layer.binding as never)
      if (key !== undefined) return key
    }
    return undefined
  }

  get parentId(): number | undefined {
    return this.extras?.parent?.id
  }

  /**
   * Not the public `Task.then`: the promise machinery calls it once to let
   * the own promise of a task that waited follow the task (see
   * `context-carrier.ts`). The record never reaches user code.
   */
  // biome-ignore lint/suspicious/noThenProperty: the adoption step of the own promise, on an internal object.
  then(resolve: (value: unknown) => void, reject: (error: unknown) => void): void {
    adoptOwn(this, resolve, reject)
  }

  // The record is what the backend queues for the first attempt: a task
  // that waits then holds no attempt of its own (88 B). A retry queues a
  // RetryTicket, so a late grant of an earlier attempt can never start it.

  /** `BackendJob.task`: the handle, as the backend may show it. */
  get task(): Task<unknown> {
    return this.handle
  }

  /** `BackendJob.priority`. */
  get priority(): number {
    return this.options.priority
  }

  /** `BackendJob.start`: the backend grants the first attempt a slot. */
  start(): void {
    if (!this.waitsAsTicket) {
      // Withdrawn (the task ended) after the backend picked it.
      this.core.backend.release(this)
      return
    }
    const job = new AttemptJob(this)
    this.job = job
    startAttempt(job)
  }

  /** Changes the state, refusing illegal transitions, and reports it on the bus. */
  moveTo(to: TaskState, extra?: TransitionExtra): void {
    const fromIndex = this.stateIndex
    const toIndex = stateIndexOf(to)
    const from = STATE_NAMES[fromIndex]!
    if ((LEGAL_NEXT[fromIndex]! & (1 << toIndex)) === 0) {
      throw new IllegalStateError(`Task #${this.id}: illegal transition ${from} → ${to}.`)
    }
    this.stateIndex = toIndex
    const core = this.core
    countMove(core, from, to)
    const bus = core.bus
    if (!bus.active) {
      // Only a live task's time is ever read (inspect lists live tasks): an
      // ending nobody listens to skips the clock, which costs a merged call
      // as much as the rest of its merge. Entering the queue defers its
      // reading to the queue stage, after the backend had its say: a task
      // started at once reads the clock once, for `running` (a reading costs
      // 60–80 ns on a VM, a third of a synchronous task's kernel time).
      if (to === 'queued') this.sinceOffset = undefined
      else if (toIndex < FIRST_TERMINAL) this.sinceOffset = sinceOffsetAt(core)
      return
    }
    const at = core.clock.now()
    this.sinceOffset = sinceOffsetAt(core, at)
    deliverTransition(bus, at, this.id, this.attempt, from, to, extra)
  }
}

// `readTaskTag(job, tag)` on a record handed to a backend as its job. Set on
// the prototype, not declared in the class: a symbol-keyed class member has
// no declaration the package's isolated .d.ts build can emit.
Object.defineProperty(TaskRecord.prototype, JOB_BINDINGS, {
  get(this: TaskRecord) {
    return this.bindings
  },
})
