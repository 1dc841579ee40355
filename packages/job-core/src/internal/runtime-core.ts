import { assertKnownKeys } from '../assert-known-keys.js'
import type { Backend } from '../backend.js'
import { type Clock, systemClock } from '../clock.js'
import type { DispatchHandler } from '../plugin.js'
import { createPriorityBackend } from '../priority-backend.js'
import type { Runtime, RuntimeOptions } from '../runtime.js'
import type { Shaper } from '../shaper.js'
import type { ShutdownMode } from '../shutdown.js'
import type { RunOptions, Task, TaskFn } from '../task.js'
import type { TaskTag } from '../task-tag.js'
import { createTask } from './create-task.js'
import { RuntimeEventBus } from './event-bus.js'
import { LiveTasks } from './live-tasks.js'
import { installPlugin } from './plugin-host.js'
import { resolveRunOptions } from './run-options.js'
import type { ShutdownState } from './shutdown-state.js'
import type { ShaperWindow } from './stages/shape.js'
import type { TaskRecord } from './task-record.js'
import { describeValue, validateConcurrency } from './validate.js'

let runtimeCount = 0

const RUNTIME_OPTION_KEYS: readonly (keyof RuntimeOptions)[] = [
  'name',
  'concurrency',
  'backend',
  'plugins',
  'clock',
  'random',
]

/** What a claimed tag maps to: the plugin and, for dispatch tags, its handler. */
export interface Claim {
  readonly plugin: string
  readonly handler: DispatchHandler<unknown> | undefined
}

/** The runtime's real state; `Runtime` is its public face. */
export class RuntimeCore implements Runtime {
  readonly name: string
  readonly clock: Clock
  /** The clock's first reading: task times are kept relative to it (see `TaskRecord.sinceOffset`). */
  readonly clockOrigin: number
  readonly bus: RuntimeEventBus
  readonly random: () => number
  backend: Backend
  readonly live: LiveTasks<TaskRecord> = new LiveTasks()
  readonly claims: Map<TaskTag<unknown>, Claim> = new Map()
  /** Open shaper windows: shaper → key hash → window. Emptied maps are deleted. */
  readonly shaperWindows: Map<Shaper, Map<string, ShaperWindow>> = new Map()
  readonly disposers: Array<{ name: string; dispose: () => void | PromiseLike<void> }> = []
  /** Bodies started and not yet exited, cancelled ones included (the honest slot count). */
  runningBodies = 0
  nextTaskId = 1
  shutdown: ShutdownState | undefined
  readonly shutdownListeners: Array<(mode: ShutdownMode) => void> = []
  private idleWaiters: Array<() => void> = []

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
    this.random = options.random ?? Math.random
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
    const plugins = options.plugins ?? []
    if (!Array.isArray(plugins)) {
      throw new TypeError(
        `createRuntime({ plugins }): plugins must be an array of plugin values, got ${describeValue(plugins)}.`,
      )
    }
    for (const plugin of plugins) installPlugin(this, plugin)
  }

  /** `run()` and `ctx.run()`: resolve the options, create the task, run its pipeline. */
  runTask<T>(
    taskFn: TaskFn<T>,
    options: RunOptions | undefined,
    fn: 'run' | 'ctx.run',
    parent: TaskRecord | undefined,
  ): Task<T> {
    return createTask(this, taskFn as TaskFn<unknown>, resolveRunOptions(this, options, fn), parent)
      .handle as Task<T>
  }

  /** Calls `callback` when no task is live and no body is running (at once if so now). */
  whenIdle(callback: () => void): void {
    if (this.isIdle()) callback()
    else this.idleWaiters.push(callback)
  }

  isIdle(): boolean {
    return this.live.size === 0 && this.runningBodies === 0
  }

  checkIdle(): void {
    if (this.idleWaiters.length === 0 || !this.isIdle()) return
    const waiters = this.idleWaiters
    this.idleWaiters = []
    for (const waiter of waiters) waiter()
  }
}

/** The runtime behind a public handle, or a `TypeError` that says what was passed. */
export function toCore(runtime: Runtime, where: string): RuntimeCore {
  if (!(runtime instanceof RuntimeCore)) {
    throw new TypeError(
      `${where}: expected a runtime from createRuntime(), got ${describe(runtime)}.`,
    )
  }
  return runtime
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (typeof value === 'object') return value.constructor?.name ?? 'an object'
  return typeof value
}
