import {
  isCancelledError,
  isTerminalState,
  type RunOptions,
  run,
  type Task,
  type TaskFn,
  type TaskState,
} from '@vega/job-core'
import type { TaskBody, UseTaskHandle, UseTaskOptions } from '../use-task-types.js'
import { describe } from './describe.js'
import type { RuntimeStore } from './runtime-store.js'

/** What the latest committed render passed to `useTask`. */
export interface LatestProps<A extends unknown[], T> {
  readonly fn: TaskBody<A, T>
  readonly options: UseTaskOptions<A, T>
  readonly store: RuntimeStore
}

/** What the handle's data members read; a new object only when one of them changes. */
interface HandleState<T> {
  readonly last: Task<T> | undefined
  readonly state: TaskState
  readonly value: T | undefined
  readonly error: unknown
  readonly isRunning: boolean
  readonly isWaiting: boolean
  readonly runCount: number
}

/** How `await task` ended for the caller (a merged call gets its peer's result). */
type CallerResult<T> =
  | { readonly status: 'fulfilled'; readonly value: T }
  | { readonly status: 'rejected'; readonly error: unknown }

interface Started<T> {
  readonly task: Task<T>
  readonly store: RuntimeStore
  unwatch: (() => void) | undefined
}

const IDLE: HandleState<never> = Object.freeze({
  last: undefined,
  state: 'idle',
  value: undefined,
  error: undefined,
  isRunning: false,
  isWaiting: false,
  runCount: 0,
})

const RUN_OPTION_KEYS = [
  'label',
  'signal',
  'dependsOn',
  'priority',
  'timeout',
  'retry',
] as const satisfies readonly (keyof RunOptions)[]
/** Every key of core's `RunOptions`: one that core adds and this list lacks fails the type check. */
type EveryRunOption<Keys extends readonly (keyof RunOptions)[]> =
  Exclude<keyof RunOptions, Keys[number]> extends never ? Keys : never
const CHECKED_RUN_OPTION_KEYS: EveryRunOption<typeof RUN_OPTION_KEYS> = RUN_OPTION_KEYS
export const USE_TASK_OPTION_KEYS: readonly string[] = [
  ...CHECKED_RUN_OPTION_KEYS,
  'bind',
  'onUnmount',
]

/**
 * One `useTask` hook: the tasks it started, what their callers received, and
 * the `useSyncExternalStore` side (subscribe, getSnapshot). It lives as long
 * as the component instance; its handle is the stable object users hold.
 */
export class TaskHook<A extends unknown[], T> {
  /** Written by an insertion effect after each commit, never during render. */
  latest: LatestProps<A, T>
  readonly handle: UseTaskHandle<A, T>
  #live: Started<T>[] = []
  #last: Started<T> | undefined
  #lastResult: CallerResult<T> | undefined
  #runCount = 0
  #value: T | undefined
  #valueIndex = 0
  #state: HandleState<T> = IDLE
  #onChange: (() => void) | undefined
  #rendering = false
  #renderEndQueued = false
  /** Bumped by every mount and unmount: a scheduled cancel runs only if nothing came after it. */
  #lifecycle = 0

  constructor(latest: LatestProps<A, T>) {
    this.latest = latest
    const read = (): HandleState<T> => this.getSnapshot()
    this.handle = Object.freeze({
      run: (...args: A): Task<T> => this.run(args),
      cancelAll: (): void => this.cancelAll(),
      get last() {
        return read().last
      },
      get state() {
        return read().state
      },
      get value() {
        return read().value
      },
      get error() {
        return read().error
      },
      get isRunning() {
        return read().isRunning
      },
      get isWaiting() {
        return read().isWaiting
      },
      get runCount() {
        return read().runCount
      },
    })
  }

  /**
   * Called at the top of each render. `run()` refuses while the flag is up;
   * the commit (insertion effect) lowers it, and so does a microtask for a
   * render React throws away: no event handler runs in between.
   */
  rendering(): void {
    this.#rendering = true
    if (this.#renderEndQueued) return
    this.#renderEndQueued = true
    queueMicrotask(() => {
      this.#renderEndQueued = false
      this.#rendering = false
    })
  }

  committed(latest: LatestProps<A, T>): void {
    this.latest = latest
    this.#rendering = false
  }

  run(args: A): Task<T> {
    if (this.#rendering) {
      throw new Error(
        'useTask: run() was called during render. Call it from an event handler or an effect: React may render a component any number of times, and each render would start a task.',
      )
    }
    const { options, store } = this.latest
    const { bind, onUnmount: _onUnmount, ...runOptions } = options
    // The body reads the latest committed fn when it starts, which may be
    // later than run() (a queue, a debounce window): never a stale closure.
    const body: TaskFn<T> = (ctx) => this.latest.fn(ctx, ...args)
    let taskFn: TaskFn<T> = body
    if (bind !== undefined) {
      taskFn = bind(body, ...args)
      if (typeof taskFn !== 'function') {
        throw new TypeError(
          `useTask(fn, { bind }): bind must return a task function (e.g. withCoordinator(taskFn, …)), got ${describe(taskFn)}.`,
        )
      }
    }
    const task = run(store.runtime, taskFn, runOptions as RunOptions)
    const index = ++this.#runCount
    const started: Started<T> = { task, store, unwatch: undefined }
    this.#last = started
    this.#lastResult = undefined
    store.track(task)
    this.#live.push(started)
    if (this.#onChange !== undefined) started.unwatch = store.watchTask(task, this.#onChange)
    task.then(
      (value) => this.#settled(started, index, { status: 'fulfilled', value }),
      (error: unknown) => this.#settled(started, index, { status: 'rejected', error }),
    )
    this.#onChange?.()
    return task
  }

  cancelAll(): void {
    for (const { task } of [...this.#live]) task.cancel()
  }

  /** `useSyncExternalStore`'s subscribe. */
  readonly subscribe = (onChange: () => void): (() => void) => {
    this.#onChange = onChange
    for (const started of this.#live) {
      started.unwatch ??= started.store.watchTask(started.task, onChange)
    }
    return () => {
      if (this.#onChange === onChange) this.#onChange = undefined
      for (const started of this.#live) {
        started.unwatch?.()
        started.unwatch = undefined
      }
    }
  }

  /** `useSyncExternalStore`'s getSnapshot: computed from the tasks, cached while equal. */
  readonly getSnapshot = (): HandleState<T> => {
    let isRunning = false
    let isWaiting = false
    for (let i = 0; i < this.#live.length; ) {
      const started = this.#live[i]!
      const state = started.store.snapshotOf(started.task).state
      if (isTerminalState(state)) {
        started.unwatch?.()
        started.unwatch = undefined
        this.#live.splice(i, 1)
        continue
      }
      if (state === 'running') isRunning = true
      else isWaiting = true
      i++
    }
    const last = this.#last
    const previous = this.#state
    let state: TaskState = 'idle'
    let error: unknown
    if (last !== undefined) {
      state = last.store.snapshotOf(last.task).state
      const result = this.#lastResult
      // A task that ended on its own shows its end together with what its caller got.
      if ((state === 'success' || state === 'error') && result === undefined) {
        state = previous.last === last.task ? previous.state : 'running'
      }
      if (result?.status === 'rejected' && !isCancelledError(result.error)) error = result.error
    }
    const value = this.#value
    const runCount = this.#runCount
    if (
      previous.last === last?.task &&
      previous.state === state &&
      Object.is(previous.value, value) &&
      Object.is(previous.error, error) &&
      previous.isRunning === isRunning &&
      previous.isWaiting === isWaiting &&
      previous.runCount === runCount
    ) {
      return previous
    }
    this.#state = Object.freeze({
      last: last?.task,
      state,
      value,
      error,
      isRunning,
      isWaiting,
      runCount,
    })
    return this.#state
  }

  mounted(): void {
    this.#lifecycle++
  }

  /**
   * StrictMode's simulated unmount is followed by a remount in the same tick,
   * which bumps `#lifecycle` and so revokes this cancel; a real unmount
   * cancels before the next macrotask.
   */
  unmounted(): void {
    const lifecycle = ++this.#lifecycle
    if (this.latest.options.onUnmount === 'keep') return
    queueMicrotask(() => {
      if (this.#lifecycle === lifecycle) this.cancelAll()
    })
  }

  #settled(started: Started<T>, index: number, result: CallerResult<T>): void {
    // Results apply in start order: an older call that ends late never hides a newer value.
    if (result.status === 'fulfilled' && index > this.#valueIndex) {
      this.#valueIndex = index
      this.#value = result.value
    }
    if (this.#last === started) this.#lastResult = result
    this.#onChange?.()
  }
}
