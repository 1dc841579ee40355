import { assertKnownKeys } from '../assert-known-keys.js'
import { systemClock } from '../clock.js'
import { createPriorityBackend } from '../priority-backend.js'
import type { Backend, Clock } from '../types/backend.js'
import type { AttemptWrapper, TaskTag } from '../types/plugin.js'
import type { RuntimeOptions } from '../types/runtime.js'
import type { Shaper } from '../types/shaper.js'
import type { RunOptions, Runtime, ShutdownMode, Task, TaskFn } from '../types/task.js'
import { requireCapability } from './backend-capability.js'
import { EventBusView, RuntimeEventBus } from './event-bus.js'
import { LiveTasks } from './live-tasks.js'
import type {
  Claim,
  QueueWaiter,
  ResolvedControl,
  ResolvedRunOptions,
  Resume,
  RuntimeCore as RuntimeCoreShape,
  ShaperWindow,
  ShutdownState,
  TaskRecord,
} from './model.js'
import { resume, runCall } from './pipeline.js'
import { installPlugin } from './plugin-host.js'
import { RateLimiter } from './rate-limit.js'
import { resolveControl } from './resolve-control.js'
import { defaultRunOptionsFor, resolveRunOptions } from './run-options.js'
import { RuntimeHandle } from './runtime-handle.js'
import { KernelGate } from './start-gate.js'
import { reportUnobservedToConsole } from './unobserved-errors.js'
import { describeValue, validateConcurrency } from './validate.js'

let runtimeCount = 0

const RUNTIME_OPTION_KEYS: readonly (keyof RuntimeOptions)[] = [
  'name',
  'concurrency',
  'backend',
  'plugins',
  'clock',
  'random',
  'defaults',
  'rateLimit',
  'maxQueued',
  'overflow',
  'abandonAfter',
  'onUnobservedError',
]

/** The runtime's real state; its public face is {@link RuntimeHandle}. */
export class RuntimeCore implements RuntimeCoreShape {
  readonly name: string
  /** What the user holds: `createRuntime()`'s return, `host.runtime`. */
  readonly handle: Runtime
  readonly clock: Clock
  /** The clock's first reading: task times are kept relative to it (see `TaskRecord.sinceOffset`). */
  readonly clockOrigin: number
  readonly bus: RuntimeEventBus
  /** The bus as users and plugins get it (see {@link EventBusView}). */
  readonly publicBus: EventBusView
  readonly random: () => number
  /** The pipeline's way back for a parked task: whatever un-parks one calls it (see `pipeline.ts`). */
  readonly resume: Resume = resume
  backend: Backend
  readonly live: LiveTasks<TaskRecord> = new LiveTasks()
  readonly claims: Map<TaskTag<unknown>, Claim> = new Map()
  /** How many claims have a `followPeer`: without any, run() skips the look for one. */
  followers = 0
  /** Open shaper windows: shaper → key hash → window. Emptied maps are deleted. */
  readonly shaperWindows: Map<Shaper, Map<string, ShaperWindow>> = new Map()
  readonly disposers: Array<{ name: string; dispose: () => void | PromiseLike<void> }> = []
  /** Bodies started and not yet exited, cancelled ones included (the honest slot count). */
  runningBodies = 0
  /** Bodies that left and whose slot the backend has not been given back yet: not idle until it has. */
  slotsToRelease = 0
  nextTaskId = 1
  shutdown: ShutdownState | undefined
  readonly shutdownListeners: Array<(mode: ShutdownMode) => void> = []
  private idleWaiters: Array<() => void> = []
  /** The runtime-control options of createRuntime, checked. */
  readonly control: ResolvedControl
  /** What a `run()` without options resolves to (the runtime's defaults, or none). */
  readonly defaultRunOptions: ResolvedRunOptions
  /** Tasks in `queued` / in `running` (kept by `countMove`, read by `counts()`). */
  queuedTasks = 0
  runningTasks = 0
  /** Bodies holding a slot whose task has already ended. */
  exitingBodies = 0
  queueWaiters: QueueWaiter[] | undefined = undefined
  /** Installed in the backend while paused or rate-limited. */
  gate: KernelGate | undefined = undefined
  /** What `wrapAttempts` installed, outermost first; `undefined` while none (the one check a body entry pays). */
  attemptWrappers: readonly AttemptWrapper[] | undefined = undefined
  /** Failed tasks waiting one macrotask to see whether anyone observes them. */
  unobserved: TaskRecord[] | undefined = undefined

  constructor(options: RuntimeOptions) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(
        `createRuntime(options): options must be an object, e.g. { concurrency: 4 }, got ${describeValue(options)}.`,
      )
    }
    assertKnownKeys('createRuntime(options)', options, RUNTIME_OPTION_KEYS)
    runtimeCount++
    this.name = options.name ?? `runtime-${runtimeCount}`
    if (typeof this.name !== 'string' || this.name === '') {
      throw new TypeError(
        `createRuntime({ name }): name must be a non-empty string, got ${describeValue(this.name)}.`,
      )
    }
    this.clock = options.clock ?? systemClock
    if (typeof this.clock.setTimeout !== 'function' || typeof this.clock.now !== 'function') {
      throw new TypeError(
        'createRuntime({ clock }): a clock needs now(), setTimeout() and clearTimeout().',
      )
    }
    this.clockOrigin = this.clock.now()
    this.handle = new RuntimeHandle(this)
    this.random = options.random ?? Math.random
    this.control = resolveControl(options, reportUnobservedToConsole)
    this.defaultRunOptions = defaultRunOptionsFor(this, this.control.defaults)
    if (options.backend !== undefined && options.concurrency !== undefined) {
      throw new TypeError(
        'createRuntime: pass either `concurrency` or a `backend`, not both; give the limit to the backend.',
      )
    }
    this.backend =
      options.backend ??
      createPriorityBackend({
        concurrency: validateConcurrency(options.concurrency, 'createRuntime({ concurrency })'),
      })
    this.bus = new RuntimeEventBus(this.clock)
    this.publicBus = new EventBusView(this.bus)
    const plugins = options.plugins ?? []
    if (!Array.isArray(plugins)) {
      throw new TypeError(
        `createRuntime({ plugins }): plugins must be an array of plugin values, got ${describeValue(plugins)}.`,
      )
    }
    for (const plugin of plugins) installPlugin(this, plugin)
    this.armControl()
  }

  /** Checks the backend offers what the control options need (after plugins wrapped it) and arms the rate limit. */
  private armControl(): void {
    const { rateLimit, overflow } = this.control
    if (overflow === 'drop-oldest') {
      requireCapability(this.backend, 'dropCandidate', "createRuntime({ overflow: 'drop-oldest' })")
    }
    if (rateLimit === undefined) return
    requireCapability(this.backend, 'setGate', 'createRuntime({ rateLimit })')
    const { limit, interval, window } = rateLimit
    const limiter = new RateLimiter(limit, interval, window, this.clock, () => this.backend.wake!())
    this.gate = new KernelGate(limiter)
    this.backend.setGate!(this.gate)
  }

  /** `run()` and `ctx.run()`: resolve the options, create the task, run its pipeline. */
  runTask<T>(
    taskFn: TaskFn<T>,
    options: RunOptions | undefined,
    fn: 'run' | 'ctx.run',
    parent: TaskRecord | undefined,
  ): Task<T> {
    const resolved = resolveRunOptions(this, options, fn)
    return runCall(this, taskFn as TaskFn<unknown>, resolved, parent) as Task<T>
  }

  /** Calls `callback` when no task is live and no body is running (at once if so now). */
  whenIdle(callback: () => void): void {
    if (this.isIdle()) callback()
    else this.idleWaiters.push(callback)
  }

  isIdle(): boolean {
    return this.live.size === 0 && this.runningBodies === 0 && this.slotsToRelease === 0
  }

  checkIdle(): void {
    if (this.idleWaiters.length === 0 || !this.isIdle()) return
    const waiters = this.idleWaiters
    this.idleWaiters = []
    for (const waiter of waiters) waiter()
  }
}
