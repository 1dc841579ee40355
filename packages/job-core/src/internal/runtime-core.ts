import { assertKnownKeys } from '../assert-known-keys.js'
import { systemClock } from '../clock.js'
import { createPriorityBackend } from '../priority-backend.js'
import type { Backend, Clock } from '../types/backend.js'
import type { AttemptWrapper, TaskTag } from '../types/plugin.js'
import type { RuntimeOptions } from '../types/runtime.js'
import type { Shaper } from '../types/shaper.js'
import type { RunOptions, Runtime, ShutdownMode, Task, TaskFn } from '../types/task.js'
import { checkBackend, requireCapability } from './backend-seam.js'
import { BodyLedger } from './body-ledger.js'
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
import { createRuntimeHandle } from './runtime-handle.js'
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
  /** Bodies holding a slot, and those of ended tasks among them (the honest slot count); only attempts move them (`attempt.ts`, `body-ledger.ts`). */
  readonly bodies: BodyLedger = new BodyLedger()
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
    this.clock = clockView(options.clock)
    this.clockOrigin = this.clock.now()
    if (typeof this.clockOrigin !== 'number' || !Number.isFinite(this.clockOrigin)) {
      throw new TypeError(
        `createRuntime({ clock }): clock.now() must return a finite number of ms, got ${describeValue(this.clockOrigin)}.`,
      )
    }
    this.handle = createRuntimeHandle(this)
    const random = options.random ?? Math.random
    if (typeof random !== 'function') {
      throw new TypeError(
        `createRuntime({ random }): random must be a function () => number in [0, 1), such as Math.random, got ${describeValue(random)}.`,
      )
    }
    this.random = random
    this.control = resolveControl(options, reportUnobservedToConsole)
    this.defaultRunOptions = defaultRunOptionsFor(this, this.control.defaults)
    if (options.backend !== undefined && options.concurrency !== undefined) {
      throw new TypeError(
        'createRuntime: pass either `concurrency` or a `backend`, not both; give the limit to the backend.',
      )
    }
    this.backend =
      options.backend === undefined
        ? createPriorityBackend({
            concurrency: validateConcurrency(options.concurrency, 'createRuntime({ concurrency })'),
          })
        : checkBackend(options.backend, 'createRuntime({ backend })')
    this.bus = new RuntimeEventBus(this.clock)
    this.publicBus = new EventBusView(this.bus)
    const plugins = options.plugins ?? []
    if (!Array.isArray(plugins)) {
      throw new TypeError(
        `createRuntime({ plugins }): plugins must be an array of plugin values, got ${describeValue(plugins)}.`,
      )
    }
    try {
      for (const [index, plugin] of plugins.entries()) installPlugin(this, plugin, index)
    } catch (error) {
      // The runtime is not created: what the plugins before installed is undone.
      disposeAll(this.disposers)
      throw error
    }
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
    return this.live.size === 0 && this.bodies.holdNoSlot
  }

  checkIdle(): void {
    if (this.idleWaiters.length === 0 || !this.isIdle()) return
    const waiters = this.idleWaiters
    this.idleWaiters = []
    for (const waiter of waiters) waiter()
  }
}

const CLOCK_METHODS = ['now', 'setTimeout', 'clearTimeout'] as const

/**
 * The runtime's own view of `clock`, checked and frozen: the kernel and its
 * plugins (`host.clock`) call the clock only through it, so a plugin that
 * assigns `clock.now` changes nothing, and one runtime's plugins cannot
 * change another's time. The system clock is shared, frozen.
 */
function clockView(clock: Clock | undefined): Clock {
  if (clock === undefined || clock === systemClock) return systemClock
  if (clock === null || typeof clock !== 'object') {
    throw new TypeError(
      `createRuntime({ clock }): clock must be an object with now(), setTimeout() and clearTimeout(), such as createTestClock(), got ${describeValue(clock)}.`,
    )
  }
  for (const method of CLOCK_METHODS) {
    if (typeof clock[method] !== 'function') {
      throw new TypeError(
        `createRuntime({ clock }): the clock's ${method} must be a function, got ${describeValue(clock[method])}; a clock has now(), setTimeout() and clearTimeout().`,
      )
    }
  }
  return Object.freeze({
    now: clock.now.bind(clock),
    setTimeout: clock.setTimeout.bind(clock),
    clearTimeout: clock.clearTimeout.bind(clock),
  })
}

/** Disposes installed plugins, last first, when `createRuntime` fails after some installed. */
function disposeAll(disposers: RuntimeCore['disposers']): void {
  for (const { name, dispose } of [...disposers].reverse()) {
    try {
      const done = dispose()
      if (done !== undefined) {
        Promise.resolve(done).then(undefined, (error: unknown) => reportDisposeError(name, error))
      }
    } catch (error) {
      reportDisposeError(name, error)
    }
  }
  disposers.length = 0
}

function reportDisposeError(plugin: string, error: unknown): void {
  console.error(
    `[@vega/job-core] plugin ${plugin} threw from its dispose while createRuntime was undone`,
    error,
  )
}
