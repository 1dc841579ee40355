import type { TimerHandle } from '../clock.js'
import type { Shaper } from '../shaper.js'
import { type Deferred, deferred, handled } from './promises.js'
import type { RuntimeCore } from './runtime-core.js'
import { type ShaperBinding, shaperTag } from './shaper-tag.js'
import type { TaskRecord } from './task-record.js'

/** One open window of one shaper for one key in one runtime. */
export interface ShaperWindow {
  /** The call that will be dispatched when the window ends (trailing edge). */
  pending: TaskRecord<unknown> | undefined
  /** The call dispatched at the leading edge of this window. */
  leader: TaskRecord<unknown> | undefined
  timer: TimerHandle
  readonly openedAt: number
  /** The caller promise every held call of the current burst shares; the survivor settles it. */
  burst: Deferred<unknown> | undefined
}

/** Stage 1: a shaped task is held by its window; anything else goes to dispatch. */
export function shapeTask(task: TaskRecord<unknown>): void {
  const binding = shaperBindingOf(task)
  if (binding === undefined) {
    task.dispatch()
    return
  }
  const { shaper, hash } = binding
  const runtime = task.runtime
  let windows = runtime.shaperWindows.get(shaper)
  if (windows === undefined) {
    windows = new Map()
    runtime.shaperWindows.set(shaper, windows)
  }
  const open = windows.get(hash)
  if (open === undefined) {
    const window: ShaperWindow = {
      pending: undefined,
      leader: undefined,
      timer: undefined,
      openedAt: runtime.clock.now(),
      burst: undefined,
    }
    windows.set(hash, window)
    window.timer = runtime.clock.setTimeout(() => closeWindow(runtime, shaper, hash), shaper.ms)
    if (shaper.leading) {
      window.leader = task
      task.dispatch()
    } else {
      holdAsPending(window, task)
    }
    return
  }
  if (shaper.trailing) {
    const previous = open.pending
    if (previous !== undefined) {
      // Merged, not withdrawn: the burst goes on. It already holds the
      // burst's promise, which this call will settle.
      open.pending = undefined
      previous.letGoOfCaller()
      previous.cancelWith('superseded', { cancelledBy: task.id })
    }
    holdAsPending(open, task)
  } else {
    const leader = open.leader!
    task.substituteCaller(leader.promise)
    task.cancelWith('superseded', { cancelledBy: leader.id })
  }
  if (shaper.kind === 'debounce') {
    runtime.clock.clearTimeout(open.timer)
    const now = runtime.clock.now()
    const due =
      shaper.maxWait === undefined
        ? now + shaper.ms
        : Math.min(now + shaper.ms, open.openedAt + shaper.maxWait)
    open.timer = runtime.clock.setTimeout(() => closeWindow(runtime, shaper, hash), due - now)
  }
}

function holdAsPending(window: ShaperWindow, task: TaskRecord<unknown>): void {
  window.pending = task
  if (window.burst === undefined) {
    window.burst = deferred<unknown>()
    handled(window.burst.promise)
  }
  task.holdCaller(window.burst)
  task.parkForShaper(() => {
    if (window.pending !== task) return
    // The pending call ended on its own (cancelled): its burst settles with
    // that ending, and later calls start a new one.
    window.pending = undefined
    window.burst = undefined
  })
}

function closeWindow(runtime: RuntimeCore, shaper: Shaper, hash: string): void {
  const windows = runtime.shaperWindows.get(shaper)
  const window = windows?.get(hash)
  if (windows === undefined || window === undefined) return
  const trailing = window.pending
  window.pending = undefined
  if (trailing !== undefined && shaper.kind === 'throttle') {
    // A trailing throttle dispatch is the first call of the next window.
    windows.set(hash, {
      pending: undefined,
      leader: trailing,
      timer: runtime.clock.setTimeout(() => closeWindow(runtime, shaper, hash), shaper.ms),
      openedAt: runtime.clock.now(),
      burst: undefined,
    })
  } else {
    windows.delete(hash)
    if (windows.size === 0) runtime.shaperWindows.delete(shaper)
  }
  trailing?.releaseFromShaper()
}

function shaperBindingOf(task: TaskRecord<unknown>): ShaperBinding | undefined {
  const entries = task.bindings?.entries
  if (entries === undefined) return undefined
  for (const entry of entries) if (entry.tag === shaperTag) return entry.binding as ShaperBinding
  return undefined
}
