// The kernel's data, as types: what a task record and a runtime hold. Internal modules and the
// classes that implement them take these types from here: no type ties a module back to one above.

import type { Backend, Clock, TimerHandle } from '../types/backend.js'
import type { Outcome } from '../types/outcome.js'
import type { AttemptWrapper, DispatchHandler, TaskTag } from '../types/plugin.js'
import type { OverflowPolicy, ShutdownReport, UnobservedErrorHandler } from '../types/runtime.js'
import type { Shaper } from '../types/shaper.js'
import type {
  CancelReason,
  RunOptions,
  Runtime,
  ShutdownMode,
  Task,
  TaskFn,
  TaskState,
  TerminalState,
} from '../types/task.js'
import type { Attempt } from './attempt.js'
import type { TaskBindings } from './bindings.js'
import type { BodyLedger } from './body-ledger.js'
import type { ContextCarrier, ContextSnapshot } from './context-carrier.js'
import type { EventBusView, RuntimeEventBus } from './event-bus.js'
import type { LiveTasks } from './live-tasks.js'
import type { Deferred } from './promises.js'
import type { QueuedAttempt } from './queued-attempt.js'
import type { KernelGate } from './start-gate.js'
import type { TaskWatchers } from './task-watchers.js'
import type { TransitionExtra } from './transition-event.js'

/** Where a task stands in the pipeline: the index of the stage it runs next (see `stages/stage.ts`). */
export type StageIndex = 0 | 1 | 2 | 3 | 4

/**
 * A task's data and its state machine: the pipeline's stages act on it,
 * `moveTo` is the only way its state changes. Every field means one thing.
 * It never leaves the kernel: callers hold a `TaskHandle`, backends a
 * `QueuedAttempt`, bodies an `AttemptContext`.
 */
export interface TaskRecord {
  readonly id: number
  /** The taskFn passed to `run()` without its tags. */
  readonly body: TaskFn<unknown>
  /** The tags of the taskFn, outermost first; `undefined` for a plain function. */
  readonly bindings: TaskBindings | undefined
  readonly options: ResolvedRunOptions
  /** What the caller holds: set once, right after construction. */
  handle: Task<unknown>
  state: TaskState
  /** The stage the pipeline runs next. */
  stage: StageIndex
  /** Attempts started so far (the one running included). */
  attempt: number
  /** Someone awaited the task, read its promise or called settle (onUnobservedError stays quiet). */
  observed: boolean
  /** Clock time of the last transition, relative to the runtime's first reading (see `sinceOffsetAt` in `task-record.ts`). */
  sinceOffset: number | undefined
  livePrev: TaskRecord | undefined
  liveNext: TaskRecord | undefined
  /** The task's own result as a promise, made on first use, with its resolvers while it is pending. */
  own: Promise<unknown> | undefined
  resolveOwn: ((value: unknown) => void) | undefined
  /** What the caller receives instead of the own promise: a dispatch handler's answer, a shaper burst's promise. */
  caller: Promise<unknown> | undefined
  /** The async context kept for a body that starts later; the next attempt takes it. */
  carrier: AttemptCarrier | undefined
  /** The attempt handed to the backend that has not started yet (`attempt.ts`). */
  waiting: QueuedAttempt | undefined
  /** The attempt whose body runs and still decides the task. */
  job: Attempt | undefined
  /** How the task ended; set once, right after the terminal transition. */
  outcome: Outcome<unknown> | undefined
  /** What only some tasks need; made on first use (`extrasOf`). */
  extras: TaskExtras | undefined
  /** The claim whose handler decided the task and has hooks to tell, until its exit was told. */
  decidedBy: Claim | undefined
  /** The runtime: its options know it. */
  readonly core: RuntimeCore
  /** A taskFn equivalent to the one passed to `run()`. */
  readonly taskFn: TaskFn<unknown>
  /** Clock time of the last transition. */
  readonly since: number
  /** The key hash a binding gave the task, if any; and its parent's id. */
  readonly key: string | undefined
  readonly parentId: number | undefined
  /** Changes the state, refusing illegal transitions, and reports it on the bus. */
  moveTo(to: TaskState, extra?: TransitionExtra): void
}

/**
 * The async context of the task's `run()` call (or of a failed attempt, for
 * a retry), kept for a body that starts later: a snapshot, or a promise door.
 */
export type AttemptCarrier = ContextSnapshot | ContextCarrier<Attempt>

/** Called with the task's handle when it reaches a terminal state, or when its last body has left. */
export type TaskCallback = (task: Task<unknown>) => void

/** What only some tasks need: a parent or children, callbacks, a parked stage's timers. */
export interface TaskExtras {
  parent: TaskRecord | undefined
  children: Set<TaskRecord> | undefined
  /** Run once, in order, at the terminal transition (`host.onSettled`). */
  settledCallbacks: TaskCallback[] | undefined
  /** Run once, in order, when the task has ended and no body of it holds a slot (`host.onExited`). */
  exitedCallbacks: TaskCallback[] | undefined
  /** `timeout.total`, armed at run() and cleared when the task ends. */
  totalTimer: TimerHandle | undefined
  /** Removes the listener on `RunOptions.signal`. */
  detachSignal: (() => void) | undefined
  /** The timer of the parked stage (the retry delay, the queue timeout). */
  stageTimer: TimerHandle | undefined
  /** What leaving the parked stage undoes (dependency listeners). */
  stageUndo: (() => void) | undefined
  /** Bodies of attempts that no longer decide the task (cancelled, timed out) and have not left yet (`body-ledger.ts`). */
  staleBodies: number
  /** A retry whose delay passed while a timed-out attempt's body was still inside: it queues when that body leaves (`body-ledger.ts`). */
  retryAfterStale: (() => void) | undefined
  /** What `watch(task, listener)` registered, until the terminal transition is told. */
  watchers: TaskWatchers | undefined
}

/** The limits of `RunOptions.timeout`, in ms; `undefined` where none applies. */
export interface Timeouts {
  readonly attempt: number | undefined
  readonly total: number | undefined
  readonly queue: number | undefined
}

/** A retry policy, defaults filled in. */
export interface ResolvedRetry {
  readonly attempts: number
  delayFor(attempt: number, error: unknown, random: () => number): number
  shouldRetry(error: unknown, attempt: number): boolean
}

/** Everything a task needs from its `run()` call, checked once and frozen: nothing downstream re-reads the caller's object. */
export interface ResolvedRunOptions {
  readonly label: string | undefined
  readonly priority: number
  readonly signal: AbortSignal | undefined
  /** A copy taken at run(): mutating the caller's array later cannot add a cycle. */
  readonly dependsOn: readonly TaskRecord[] | undefined
  readonly timeouts: Timeouts | undefined
  readonly retry: ResolvedRetry | undefined
  /** The caller's object, for dispatch handlers (`request.options`). */
  readonly given: RunOptions
  /** The runtime the options were resolved for: a record reaches its runtime through here. */
  readonly core: RuntimeCore
}

/** `RuntimeOptions.rateLimit` with its window chosen. */
export interface ResolvedRateLimit {
  readonly limit: number
  readonly interval: number
  readonly window: 'fixed' | 'sliding'
}

/** `RuntimeOptions.defaults`, checked once at `createRuntime`. */
export interface ResolvedDefaults {
  readonly priority: number | undefined
  readonly timeouts: Timeouts | undefined
  readonly retry: ResolvedRetry | undefined
}

/** The runtime-control options of `createRuntime`, checked and with their defaults filled in. */
export interface ResolvedControl {
  readonly defaults: ResolvedDefaults | undefined
  readonly rateLimit: ResolvedRateLimit | undefined
  readonly maxQueued: number
  readonly overflow: OverflowPolicy
  readonly abandonAfter: number
  /** `undefined` when reporting is off. */
  readonly onUnobservedError: UnobservedErrorHandler | undefined
}

/** What a claimed tag maps to: the plugin and, for dispatch tags, its handler. */
export interface Claim {
  readonly plugin: string
  readonly tag: TaskTag<unknown>
  readonly handler: DispatchHandler<unknown> | undefined
  /** `ClaimOptions.onSettled` / `onExited`: told of every task the handler decides. */
  readonly onSettled: ((task: Task<unknown>, binding: unknown) => void) | undefined
  readonly onExited: ((task: Task<unknown>, binding: unknown) => void) | undefined
  /** `ClaimOptions.followPeer`: merges a call into a peer before its task is built. */
  readonly followPeer: ((binding: unknown) => Task<unknown> | undefined) | undefined
  readonly followReason: CancelReason
}

/** A `whenQueueBelow(runtime, below)` that still waits. */
export interface QueueWaiter {
  readonly below: number
  readonly resolve: () => void
}

/** What un-parked a task, as `task.core.resume(task, why)` is told; the pipeline decides where it goes on. */
export type ResumeReason =
  /** A shaper window closed on it: its survivor is dispatched. */
  | 'shaper-released'
  /** A dispatch handler called `proceed()`. */
  | 'proceeded'
  /** The last of its `dependsOn` tasks succeeded. */
  | 'dependencies-met'
  /** A retry delay passed. */
  | 'retry-due'
  /** The backend granted the waiting attempt a slot. */
  | 'slot-granted'

/** Runs the pipeline again for a task that was parked; see `pipeline.ts`. */
export type Resume = (task: TaskRecord, why: ResumeReason) => void

/**
 * One open window of one shaper for one key in one runtime (the class is
 * `shaper-window.ts`'s): a held call is only the window's `pending`.
 */
export interface ShaperWindow {
  /** The call that will be dispatched when the window ends (trailing edge). */
  pending: TaskRecord | undefined
  /** The call dispatched at the leading edge of this window. */
  leader: TaskRecord | undefined
  timer: TimerHandle
  openedAt: number
  /** The caller promise every held call of the current burst shares; the survivor settles it. */
  burst: Deferred<unknown> | undefined
  /** The window's timer callback, made once. */
  readonly close: () => void
  readonly core: RuntimeCore
  readonly shaper: Shaper
  readonly hash: string
  /** The map of its shaper this window sits in (under `hash`). */
  readonly windows: Map<string, ShaperWindow>
}

/** A shutdown in progress or finished (the class is `shutdown-state.ts`'s). */
export interface ShutdownState {
  readonly promise: Promise<ShutdownReport>
  /** The shutdown is over: every task ended and every plugin was disposed. */
  readonly isFinished: boolean
  start(deadline: number | undefined): void
  /** A second call: `cancel` takes over a drain; an earlier deadline wins. */
  join(mode: ShutdownMode, deadline: number | undefined): void
  /** `abandonAfter` let go of a body while the shutdown ran: the report counts it. */
  bodyAbandoned(): void
  taskSettled(status: TerminalState): void
}

/** The runtime's real state (the class is `runtime-core.ts`'s); its public face is a `RuntimeHandle`. */
export interface RuntimeCore {
  readonly name: string
  /** What the user holds: `createRuntime()`'s return, `host.runtime`. */
  readonly handle: Runtime
  readonly clock: Clock
  /** The clock's first reading: task times are kept relative to it. */
  readonly clockOrigin: number
  readonly bus: RuntimeEventBus
  /** The bus as users and plugins get it. */
  readonly publicBus: EventBusView
  readonly random: () => number
  /** The pipeline's way back for a parked task: whatever un-parks one calls it. */
  readonly resume: Resume
  backend: Backend
  readonly live: LiveTasks<TaskRecord>
  readonly claims: Map<TaskTag<unknown>, Claim>
  /** How many claims have a `followPeer`: without any, run() skips the look for one. */
  followers: number
  /** Open shaper windows: shaper → key hash → window. Emptied maps are deleted. */
  readonly shaperWindows: Map<Shaper, Map<string, ShaperWindow>>
  readonly disposers: Array<{ name: string; dispose: () => void | PromiseLike<void> }>
  /** Bodies holding a slot, and those of ended tasks among them (the honest slot count); only attempts move them (`attempt.ts`, `body-ledger.ts`). */
  readonly bodies: BodyLedger
  nextTaskId: number
  shutdown: ShutdownState | undefined
  readonly shutdownListeners: Array<(mode: ShutdownMode) => void>
  /** The runtime-control options of createRuntime, checked. */
  readonly control: ResolvedControl
  /** What a `run()` without options resolves to (the runtime's defaults, or none). */
  readonly defaultRunOptions: ResolvedRunOptions
  /** Tasks in `queued` / in `running` (kept by `countMove`, read by `counts()`). */
  queuedTasks: number
  runningTasks: number
  queueWaiters: QueueWaiter[] | undefined
  /** Installed in the backend while paused or rate-limited. */
  gate: KernelGate | undefined
  /** What `wrapAttempts` installed, outermost first; `undefined` while none. */
  attemptWrappers: readonly AttemptWrapper[] | undefined
  /** Failed tasks waiting one macrotask to see whether anyone observes them. */
  unobserved: TaskRecord[] | undefined
  /** `run()` and `ctx.run()`: resolve the options, then the pipeline takes the call (`pipeline.ts`). */
  runTask<T>(
    taskFn: TaskFn<T>,
    options: RunOptions | undefined,
    fn: 'run' | 'ctx.run',
    parent: TaskRecord | undefined,
  ): Task<T>
  /** Calls `callback` when no task is live and no body is running (at once if so now). */
  whenIdle(callback: () => void): void
  isIdle(): boolean
  checkIdle(): void
}
