import { isTerminalState } from '../task-state.js'
import type { TaskTransitionEvent } from '../types/events.js'
import type { TaskRecord } from './model.js'
import { extrasOf } from './task-extras.js'

/** What `watch(task, listener)` registered: `active` until its remover runs. */
interface Watcher {
  readonly listener: (event: TaskTransitionEvent) => void
  active: boolean
}

/**
 * The watchers of one task (`TaskExtras.watchers`, made by the first
 * `watch`). `telling` is set while a transition of the task is being told
 * (to the bus, then to the watchers): a transition a listener causes
 * meanwhile waits in `backlog`, so watchers get the task's transitions in
 * the order they happened and the terminal one last.
 */
export interface TaskWatchers {
  /** Copy-on-write: a watcher added while one event is told starts with the next. */
  watchers: readonly Watcher[]
  telling: boolean
  backlog: TaskTransitionEvent[] | undefined
}

/**
 * Calls `listener` with every later transition of `task`, up to and
 * including its terminal one. Returns the remover; a task already ended
 * gets none (its last transition has been told) and a remover that does
 * nothing.
 */
export function addWatcher(
  task: TaskRecord,
  listener: (event: TaskTransitionEvent) => void,
): () => void {
  if (task.outcome !== undefined) return nothingToRemove
  const extras = extrasOf(task)
  const watchers = (extras.watchers ??= { watchers: [], telling: false, backlog: undefined })
  const watcher: Watcher = { listener, active: true }
  watchers.watchers = [...watchers.watchers, watcher]
  return () => {
    if (!watcher.active) return
    watcher.active = false
    watchers.watchers = watchers.watchers.filter((w) => w !== watcher)
    // The last one gone: the task's transitions take the unwatched path again.
    if (watchers.watchers.length === 0 && extras.watchers === watchers) extras.watchers = undefined
  }
}

const nothingToRemove = (): void => {}

/**
 * Tells `event` (a transition of `task`, the runtime already moved) to the
 * bus, then to the task's watchers; after the terminal one, the watchers
 * are dropped.
 */
export function tellWatched(
  task: TaskRecord,
  watchers: TaskWatchers,
  event: TaskTransitionEvent,
): void {
  const bus = task.core.bus
  if (watchers.telling) {
    bus.deliver(event)
    ;(watchers.backlog ??= []).push(event)
    return
  }
  watchers.telling = true
  try {
    bus.deliver(event)
    for (let next: TaskTransitionEvent | undefined = event; next !== undefined; ) {
      for (const watcher of watchers.watchers) {
        // A watcher removed by an earlier one during this event is not called.
        if (!watcher.active) continue
        try {
          watcher.listener(next)
        } catch (error) {
          bus.reportListenerError(error, next, bus.active)
        }
      }
      if (isTerminalState(next.to)) {
        for (const watcher of watchers.watchers) watcher.active = false
        watchers.watchers = []
        if (task.extras!.watchers === watchers) task.extras!.watchers = undefined
      }
      next = watchers.backlog?.shift()
    }
  } finally {
    watchers.telling = false
    watchers.backlog = undefined
  }
}
