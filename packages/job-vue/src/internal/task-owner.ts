import {
  type CancelReason,
  isCancelledError,
  isTerminalState,
  type RunOptions,
  type Runtime,
  run,
  type Task,
  type TaskFn,
  type TaskState,
  watch as watchTask,
} from '@vega/job-core'
import { computed, type MaybeRefOrGetter, shallowRef, toValue } from 'vue'
import type { TaskBody, UseTaskOptions, UseTaskReturn } from '../use-task-types.js'
import { describe } from './describe.js'
import { validateOptions } from './options.js'

/** What the returned refs read; a new object only when one of them changes. */
interface OwnerState<T> {
  readonly last: Task<T> | undefined
  readonly state: TaskState
  readonly value: T | undefined
  readonly error: unknown
  readonly cancelReason: CancelReason | undefined
  readonly cancelledBy: number | undefined
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
  /** Start order: results apply in it, whatever order they arrive in. */
  readonly index: number
  unwatch: () => void
}

const IDLE: OwnerState<never> = Object.freeze({
  last: undefined,
  state: 'idle',
  value: undefined,
  error: undefined,
  cancelReason: undefined,
  cancelledBy: undefined,
  isRunning: false,
  isWaiting: false,
  runCount: 0,
})

/** Why a scope cancels its tasks; a cancelled caller finds it as the `CancelledError`'s `cause`. */
export const UNMOUNT = 'unmount'

/**
 * The tasks one `useTask` started and what their callers received. It
 * follows each task with core's `watch` (no bus listener) and publishes one
 * frozen state; the returned refs are computed from it, so a component
 * re-renders only when a member it reads changes.
 */
export class TaskOwner<A extends unknown[], T> {
  readonly handle: UseTaskReturn<A, T>
  readonly #runtime: Runtime
  readonly #fn: TaskBody<A, T>
  readonly #options: MaybeRefOrGetter<UseTaskOptions<A, T>>
  readonly #state = shallowRef<OwnerState<T>>(IDLE)
  readonly #live = new Set<Started<T>>()
  #last: Started<T> | undefined
  #lastResult: CallerResult<T> | undefined
  #runCount = 0
  #value: T | undefined
  /** The start index of the call `#value` came from; a reset moves it to the latest start. */
  #valueIndex = 0
  /** Aborted when the scope stops: the signal of every task started with `onUnmount: 'cancel'`. */
  readonly #scope = new AbortController()
  #disposed = false

  constructor(
    runtime: Runtime,
    fn: TaskBody<A, T>,
    options: MaybeRefOrGetter<UseTaskOptions<A, T>>,
  ) {
    this.#runtime = runtime
    this.#fn = fn
    this.#options = options
    const member = <K extends keyof OwnerState<T>>(key: K) => computed(() => this.#state.value[key])
    this.handle = Object.freeze({
      run: (...args: A): void => {
        this.run(args)
      },
      runAsync: (...args: A): Task<T> => this.run(args),
      cancelAll: (): void => this.cancelAll(),
      reset: (): void => this.reset(),
      last: member('last'),
      state: member('state'),
      value: member('value'),
      error: member('error'),
      cancelReason: member('cancelReason'),
      cancelledBy: member('cancelledBy'),
      isRunning: member('isRunning'),
      isWaiting: member('isWaiting'),
      runCount: member('runCount'),
    })
  }

  run(args: A): Task<T> {
    const options = validateOptions<A, T>(toValue(this.#options))
    const { bind, onUnmount, ...runOptions } = options
    // The body calls fn when it starts (after a queue or a debounce window):
    // a fn that reads props or refs reads them then, never a stale copy.
    const body: TaskFn<T> = (ctx) => this.#fn(ctx, ...args)
    let taskFn: TaskFn<T> = body
    if (bind !== undefined) {
      taskFn = bind(body, ...args)
      if (typeof taskFn !== 'function') {
        throw new TypeError(
          `useTask(fn, { bind }): bind must return a task function (e.g. withCoordinator(taskFn, …)), got ${describe(taskFn)}.`,
        )
      }
    }
    if (onUnmount !== 'keep') {
      const own = this.#scope.signal
      runOptions.signal =
        runOptions.signal === undefined ? own : AbortSignal.any([runOptions.signal, own])
    }
    const task = run(this.#runtime, taskFn, runOptions as RunOptions)
    const started: Started<T> = { task, index: ++this.#runCount, unwatch: () => {} }
    this.#last = started
    this.#lastResult = undefined
    if (!this.#disposed && !isTerminalState(task.state)) {
      this.#live.add(started)
      started.unwatch = watchTask(task, () => this.#refresh())
    }
    // Reading what the caller gets marks the task observed: its error shows in `error`.
    task.then(
      (value) => this.#settled(started, { status: 'fulfilled', value }),
      (error: unknown) => this.#settled(started, { status: 'rejected', error }),
    )
    this.#refresh()
    return task
  }

  cancelAll(): void {
    for (const { task } of [...this.#live]) task.cancel()
  }

  reset(): void {
    this.#last = undefined
    this.#lastResult = undefined
    this.#value = undefined
    this.#valueIndex = this.#runCount
    this.#refresh()
  }

  /** The scope stopped: cancel what it owns (through the signal), stop following everything. */
  dispose(): void {
    this.#disposed = true
    this.#scope.abort(UNMOUNT)
    for (const started of this.#live) started.unwatch()
    this.#live.clear()
  }

  #settled(started: Started<T>, result: CallerResult<T>): void {
    // Results apply in start order: an older call that ends late never hides a newer value.
    if (result.status === 'fulfilled' && started.index > this.#valueIndex) {
      this.#valueIndex = started.index
      this.#value = result.value
    }
    if (this.#last === started) this.#lastResult = result
    this.#refresh()
  }

  #refresh(): void {
    if (this.#disposed) return
    let isRunning = false
    let isWaiting = false
    for (const started of [...this.#live]) {
      const state = started.task.state
      if (isTerminalState(state)) {
        started.unwatch()
        this.#live.delete(started)
      } else if (state === 'running') isRunning = true
      else isWaiting = true
    }
    const previous = this.#state.value
    const last = this.#last
    let state: TaskState = 'idle'
    let error: unknown
    if (last !== undefined) {
      state = last.task.state
      const result = this.#lastResult
      // A task that ended on its own shows its end together with what its caller got.
      if ((state === 'success' || state === 'error') && result === undefined) {
        state = previous.last === last.task ? previous.state : 'running'
      }
      if (result?.status === 'rejected' && !isCancelledError(result.error)) error = result.error
    }
    const next: OwnerState<T> = {
      last: last?.task,
      state,
      value: this.#value,
      error,
      cancelReason: last?.task.cancelReason,
      cancelledBy: last?.task.cancelledBy,
      isRunning,
      isWaiting,
      runCount: this.#runCount,
    }
    for (const key of Object.keys(next) as (keyof OwnerState<T>)[]) {
      if (!Object.is(next[key], previous[key])) {
        this.#state.value = Object.freeze(next)
        return
      }
    }
  }
}
