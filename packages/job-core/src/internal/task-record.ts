import { IllegalStateError } from '../errors.js'
import { isLegalTransition, isTerminalState } from '../task-state.js'
import type { Outcome } from '../types/outcome.js'
import type { Task, TaskFn, TaskState } from '../types/task.js'
import type { Attempt } from './attempt.js'
import { type TaskBindings, withLayers } from './bindings.js'
import { countMove } from './counters.js'
import type {
  AttemptCarrier,
  Claim,
  ResolvedRunOptions,
  RuntimeCore,
  StageIndex,
  TaskExtras,
  TaskRecord as TaskRecordShape,
} from './model.js'
import type { QueuedAttempt } from './queued-attempt.js'
import { stampNow } from './shared-reading.js'
import { SHAPE } from './stages/stage.js'
import { tellWatched } from './task-watchers.js'
import { type TransitionExtra, transitionEvent } from './transition-event.js'

/**
 * A task's data and its state machine, nothing else: the pipeline's stages
 * act on it, `moveTo` is the only way its state changes. Every field means
 * one thing. What few tasks need (children, callbacks, timers of parked
 * stages) lives in `extras`, allocated on first use. The record never
 * leaves the kernel: callers hold a `TaskHandle`, backends a `QueuedAttempt`,
 * bodies an `AttemptContext`.
 */
export class TaskRecord implements TaskRecordShape {
  readonly id: number
  /**
   * The function the body runs: the taskFn passed to `run()` without its
   * tags. With `bindings`, all the task keeps of that taskFn: a tagged
   * function made per call is not held while the task waits.
   */
  readonly body: TaskFn<unknown>
  /** The tags of the taskFn, outermost first; `undefined` for a plain function. */
  readonly bindings: TaskBindings | undefined
  readonly options: ResolvedRunOptions
  /** What the caller holds: set once, right after construction. */
  handle!: Task<unknown>
  /** Where the task is in its state machine; only `moveTo` (and a followed call's record, born ended) sets it. */
  state: TaskState = 'idle'
  /** The stage the pipeline runs next (see `pipeline.ts`). */
  stage: StageIndex = SHAPE
  /** Attempts started so far (the one running included). */
  attempt = 0
  /** Someone awaited the task, read its promise or called settle (onUnobservedError stays quiet). */
  observed = false
  /**
   * Clock time of the last transition (devtools snapshots show how long a
   * task has waited), relative to the runtime's first clock reading, so it
   * stays a small integer (see `sinceOffsetAt` below).
   */
  sinceOffset: number | undefined = undefined
  livePrev: TaskRecordShape | undefined = undefined
  liveNext: TaskRecordShape | undefined = undefined
  /** The task's own result as a promise, made on first use, with its resolvers while it is pending. */
  own: Promise<unknown> | undefined = undefined
  resolveOwn: ((value: unknown) => void) | undefined = undefined
  /** What the caller receives instead of the own promise: a dispatch handler's answer, a shaper burst's promise. */
  caller: Promise<unknown> | undefined = undefined
  /**
   * The async context of `run()` (or of a failed attempt, for a retry),
   * kept while the task waits, for the body that starts later; the next
   * attempt takes it when it starts.
   */
  carrier: AttemptCarrier | undefined = undefined
  /** The job handed to the backend for the next attempt, until it starts or the task leaves the queue (`queued-attempt.ts`). */
  waiting: QueuedAttempt | undefined = undefined
  /** The attempt whose body runs and still decides the task. */
  job: Attempt | undefined = undefined
  /** How the task ended; set once, right after the terminal transition (see `finish`). */
  outcome: Outcome<unknown> | undefined = undefined
  /** What only some tasks need; made on first use (`extrasOf`). */
  extras: TaskExtras | undefined = undefined
  /**
   * The claim whose handler decided the task, when it has hooks
   * (`ClaimOptions.onSettled` / `onExited`): set at dispatch, cleared once
   * its exit was told (see `ending-hooks.ts`).
   */
  decidedBy: Claim | undefined = undefined

  /** `id` is given only for a call that already has one (a followed call's record, made late). */
  constructor(
    body: TaskFn<unknown>,
    bindings: TaskBindings | undefined,
    options: ResolvedRunOptions,
    id: number = options.core.nextTaskId++,
  ) {
    this.id = id
    this.body = body
    this.bindings = bindings
    this.options = options
  }

  /** The runtime: its options know it (see `ResolvedRunOptions.core`). */
  get core(): RuntimeCore {
    return this.options.core
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
   * Changes the state, refusing illegal transitions, and tells it to the
   * bus and the task's watchers. Whoever keeps counts of the move (the
   * counters here, the live list and body counts in the stages) has
   * already moved them: a listener reads the runtime after the event.
   */
  moveTo(to: TaskState, extra?: TransitionExtra): void {
    const from = this.state
    if (!isLegalTransition(from, to)) {
      throw new IllegalStateError(`Task #${this.id}: illegal transition ${from} → ${to}.`)
    }
    this.state = to
    const core = this.core
    countMove(core, from, to)
    const bus = core.bus
    const watchers = this.extras?.watchers
    if (!bus.active && watchers === undefined) {
      // Only a live task's time is ever read (inspect lists live tasks): an
      // ending nobody listens to skips the clock. Entering the queue defers
      // its reading to the queue stage, after the backend had its say: a
      // task started at once reads the clock once, for `running`.
      if (to === 'queued') this.sinceOffset = undefined
      else if (!isTerminalState(to)) this.sinceOffset = sinceOffsetAt(core)
      return
    }
    const at = stampNow(core.clock)
    this.sinceOffset = sinceOffsetAt(core, at)
    const event = transitionEvent(bus, at, this.id, this.attempt, from, to, extra)
    if (watchers === undefined) bus.deliver(event)
    else tellWatched(this, watchers, event)
  }
}

/**
 * A clock reading (now, unless given) as an offset from the runtime's first
 * one, made a small integer whenever it is one. A difference of two epoch
 * readings is a heap number as computed (a heap object per record when stored), and
 * one stored heap number turns the field into a boxed double for every
 * record after it. Fractional clocks and runtimes older than 24 days keep
 * the plain number.
 */
export function sinceOffsetAt(core: RuntimeCore, at?: number): number {
  const offset = (at ?? stampNow(core.clock)) - core.clockOrigin
  const small = offset | 0
  return small === offset ? small : offset
}
