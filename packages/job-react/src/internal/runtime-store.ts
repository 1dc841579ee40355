import {
  counts,
  type EventBus,
  getEventBus,
  isTerminalState,
  type Outcome,
  type Runtime,
  type RuntimeCounts,
  type RuntimeEvent,
  settle,
  type Task,
} from '@vega/job-core'
import type { TaskStateSnapshot } from '../task-state-snapshot.js'
import { describe } from './describe.js'

type AnyTask = Task<unknown>
type Listener = () => void

/** What `useCounts` reads during server rendering and hydration: nothing has run there. */
export const SERVER_COUNTS: RuntimeCounts = Object.freeze({
  live: 0,
  parked: 0,
  queued: 0,
  running: 0,
  exiting: 0,
})

const stores = new WeakMap<Runtime, RuntimeStore>()

/**
 * The one store of `runtime`, shared by every provider and hook that uses it,
 * so the runtime has at most one bus listener whatever the number of hooks.
 */
export function storeOf(runtime: Runtime, where: string): RuntimeStore {
  if (runtime === null || typeof runtime !== 'object') {
    throw new TypeError(
      `${where}: the runtime prop must be a runtime from createRuntime(), got ${describe(runtime)}.`,
    )
  }
  let store = stores.get(runtime)
  if (store === undefined) {
    let bus: EventBus
    try {
      bus = getEventBus(runtime)
    } catch (cause) {
      throw new TypeError(
        `${where}: the runtime prop must be a runtime from createRuntime(), got ${describe(runtime)}.`,
        { cause },
      )
    }
    store = new RuntimeStore(runtime, bus)
    stores.set(runtime, store)
  }
  return store
}

/**
 * Snapshots of tasks and counts for `useSyncExternalStore`, fed by a single
 * bus listener fanned out per task id. The listener exists while something
 * holds the store (a mounted provider, a watched task, an event listener),
 * so a runtime nobody renders has none.
 *
 * A task's terminal state is published together with its outcome (read with
 * `settle`, a few microtasks after the transition event): a snapshot never
 * says `success` without its `value`.
 */
export class RuntimeStore {
  readonly runtime: Runtime
  readonly #bus: EventBus
  #unsubscribe: (() => void) | undefined
  #holders = 0
  readonly #taskWatchers = new Map<number, Set<Listener>>()
  readonly #eventListeners = new Map<string, Set<(event: RuntimeEvent) => void>>()
  readonly #countsWatchers = new Set<Listener>()
  readonly #snapshots = new WeakMap<AnyTask, TaskStateSnapshot>()
  readonly #outcomes = new WeakMap<AnyTask, Outcome<unknown>>()
  readonly #tracked = new WeakSet<AnyTask>()
  #counts: RuntimeCounts = SERVER_COUNTS

  constructor(runtime: Runtime, bus: EventBus) {
    this.runtime = runtime
    this.#bus = bus
  }

  /** Keeps the bus listener while held; returns the release (idempotent). */
  hold(): () => void {
    if (this.#holders++ === 0) this.#unsubscribe = this.#bus.subscribe(this.#onEvent)
    let held = true
    return () => {
      if (!held) return
      held = false
      if (--this.#holders === 0) {
        this.#unsubscribe?.()
        this.#unsubscribe = undefined
      }
    }
  }

  /** Starts reading the task's outcome (once per task), so its terminal snapshot can carry it. */
  track(task: AnyTask): void {
    if (this.#tracked.has(task)) return
    this.#tracked.add(task)
    // settle never rejects, and marks the task observed: the hooks show its error.
    void settle(task).then((outcome) => {
      this.#outcomes.set(task, outcome)
      this.#notifyTask(task.id)
    })
  }

  /** The task's current snapshot: the same object as long as no field changed. */
  snapshotOf<T>(task: Task<T>): TaskStateSnapshot<T> {
    const outcome = this.#outcomes.get(task)
    const cached = this.#snapshots.get(task) as TaskStateSnapshot<T> | undefined
    const state = task.state
    if (outcome === undefined && isTerminalState(state)) {
      this.track(task)
      // The terminal state is published with its outcome, a few microtasks from now.
      if (cached !== undefined) return cached
    }
    const value = outcome?.status === 'success' ? (outcome.value as T) : undefined
    const error = outcome?.status === 'error' ? outcome.error : undefined
    const cancelReason = task.cancelReason
    const cancelledBy = task.cancelledBy
    const attempt = task.attempt
    if (
      cached !== undefined &&
      cached.state === state &&
      cached.attempt === attempt &&
      cached.cancelReason === cancelReason &&
      cached.cancelledBy === cancelledBy &&
      Object.is(cached.value, value) &&
      Object.is(cached.error, error)
    ) {
      return cached
    }
    const snapshot: TaskStateSnapshot<T> = Object.freeze({
      id: task.id,
      label: task.label,
      state,
      cancelReason,
      cancelledBy,
      attempt,
      value,
      error,
    })
    this.#snapshots.set(task, snapshot)
    return snapshot
  }

  /** Calls `onChange` when the task may have changed; returns the unwatch (idempotent). */
  watchTask(task: AnyTask, onChange: Listener): () => void {
    this.track(task)
    const release = this.hold()
    let watchers = this.#taskWatchers.get(task.id)
    if (watchers === undefined) this.#taskWatchers.set(task.id, (watchers = new Set()))
    watchers.add(onChange)
    return () => {
      const current = this.#taskWatchers.get(task.id)
      if (current?.delete(onChange) && current.size === 0) this.#taskWatchers.delete(task.id)
      release()
    }
  }

  /** Calls `listener` with every event of `type`; returns the unsubscribe. */
  onEvent(type: string, listener: (event: RuntimeEvent) => void): () => void {
    const release = this.hold()
    let listeners = this.#eventListeners.get(type)
    if (listeners === undefined) this.#eventListeners.set(type, (listeners = new Set()))
    listeners.add(listener)
    return () => {
      const current = this.#eventListeners.get(type)
      if (current?.delete(listener) && current.size === 0) this.#eventListeners.delete(type)
      release()
    }
  }

  /** `useSyncExternalStore`'s subscribe for the counts. */
  readonly watchCounts = (onChange: Listener): (() => void) => {
    const release = this.hold()
    this.#countsWatchers.add(onChange)
    return () => {
      this.#countsWatchers.delete(onChange)
      release()
    }
  }

  /** `counts(runtime)`, the same object while no count changed. */
  readonly countsSnapshot = (): RuntimeCounts => {
    const next = counts(this.runtime)
    const last = this.#counts
    if (
      next.live === last.live &&
      next.parked === last.parked &&
      next.queued === last.queued &&
      next.running === last.running &&
      next.exiting === last.exiting
    ) {
      return last
    }
    this.#counts = Object.freeze(next)
    return this.#counts
  }

  readonly #onEvent = (event: RuntimeEvent): void => {
    if (event.type === 'task:transition' || event.type === 'task:retry') {
      this.#notifyTask(event.taskId)
    }
    if (this.#countsWatchers.size > 0 && event.type.startsWith('task:')) {
      for (const onChange of [...this.#countsWatchers]) onChange()
    }
    const listeners = this.#eventListeners.get(event.type)
    if (listeners !== undefined) for (const listener of [...listeners]) listener(event)
  }

  #notifyTask(taskId: number): void {
    const watchers = this.#taskWatchers.get(taskId)
    if (watchers !== undefined) for (const onChange of [...watchers]) onChange()
  }
}
