import type { TimerHandle } from '../../clock.js'
import type { Shaper } from '../../shaper.js'
import { holdCaller, letGoOfCaller, substitute } from '../caller-promise.js'
import { cancelTask } from '../cancellation.js'
import { type Deferred, deferred, handled } from '../promises.js'
import type { RuntimeCore } from '../runtime-core.js'
import { type ShaperBinding, shaperTag } from '../shaper-tag.js'
import { extrasOf } from '../task-extras.js'
import type { TaskRecord } from '../task-record.js'
import { type Advance, DISPATCH, type StageResult } from './stage.js'

/** One open window of one shaper for one key in one runtime. */
export interface ShaperWindow {
  /** The call that will be dispatched when the window ends (trailing edge). */
  pending: TaskRecord | undefined
  /** The call dispatched at the leading edge of this window. */
  leader: TaskRecord | undefined
  timer: TimerHandle
  readonly openedAt: number
  /** The caller promise every held call of the current burst shares; the survivor settles it. */
  burst: Deferred<unknown> | undefined
  /** Dispatches a released call (the pipeline, from the dispatch stage). */
  readonly advance: Advance
}

/**
 * A shaped task is held, merged or let through by its window; anything else
 * goes on. Merged calls are never dispatched: no second intent reaches a
 * coordinator.
 */
export function shape(task: TaskRecord, advance: Advance): StageResult {
  const binding = shaperBindingOf(task)
  if (binding === undefined) return 'next'
  const { shaper, hash } = binding
  const core = task.core
  let windows = core.shaperWindows.get(shaper)
  if (windows === undefined) {
    windows = new Map()
    core.shaperWindows.set(shaper, windows)
  }
  const open = windows.get(hash)
  if (open === undefined) {
    const window: ShaperWindow = {
      pending: undefined,
      leader: undefined,
      timer: undefined,
      openedAt: core.clock.now(),
      burst: undefined,
      advance,
    }
    windows.set(hash, window)
    window.timer = core.clock.setTimeout(() => closeWindow(core, shaper, hash), shaper.ms)
    if (shaper.leading) {
      window.leader = task
      return 'next'
    }
    holdAsPending(window, task)
    return 'parked'
  }
  let result: StageResult
  if (shaper.trailing) {
    const previous = open.pending
    if (previous !== undefined) {
      // Merged, not withdrawn: the burst goes on. It already holds the
      // burst's promise, which this call will settle.
      open.pending = undefined
      letGoOfCaller(previous)
      // The burst shares one promise: whoever observed a merged call observes the survivor.
      if (previous.observed) task.observed = true
      cancelTask(previous, 'superseded', { cancelledBy: task.id })
    }
    holdAsPending(open, task)
    result = 'parked'
  } else {
    const leader = open.leader!
    substitute(task, leader.handle.promise)
    cancelTask(task, 'superseded', { cancelledBy: leader.id })
    result = 'ended'
  }
  if (shaper.kind === 'debounce') {
    core.clock.clearTimeout(open.timer)
    const now = core.clock.now()
    const due =
      shaper.maxWait === undefined
        ? now + shaper.ms
        : Math.min(now + shaper.ms, open.openedAt + shaper.maxWait)
    open.timer = core.clock.setTimeout(() => closeWindow(core, shaper, hash), due - now)
  }
  return result
}

function holdAsPending(window: ShaperWindow, task: TaskRecord): void {
  window.pending = task
  if (window.burst === undefined) {
    window.burst = deferred<unknown>()
    handled(window.burst.promise)
  }
  holdCaller(task, window.burst)
  task.moveTo('parked:shaper')
  extrasOf(task).stageUndo = () => {
    if (window.pending !== task) return
    // The pending call ended on its own (cancelled): its burst settles with
    // that ending, and later calls start a new one.
    window.pending = undefined
    window.burst = undefined
  }
}

function closeWindow(core: RuntimeCore, shaper: Shaper, hash: string): void {
  const windows = core.shaperWindows.get(shaper)
  const window = windows?.get(hash)
  if (windows === undefined || window === undefined) return
  const trailing = window.pending
  window.pending = undefined
  if (trailing !== undefined && shaper.kind === 'throttle') {
    // A trailing throttle dispatch is the first call of the next window.
    windows.set(hash, {
      pending: undefined,
      leader: trailing,
      timer: core.clock.setTimeout(() => closeWindow(core, shaper, hash), shaper.ms),
      openedAt: core.clock.now(),
      burst: undefined,
      advance: window.advance,
    })
  } else {
    windows.delete(hash)
    if (windows.size === 0) core.shaperWindows.delete(shaper)
  }
  if (trailing !== undefined && trailing.state === 'parked:shaper') {
    trailing.extras!.stageUndo = undefined
    trailing.moveTo('idle')
    trailing.stage = DISPATCH
    window.advance(trailing)
  }
}

function shaperBindingOf(task: TaskRecord): ShaperBinding | undefined {
  const entries = task.bindings?.entries
  if (entries === undefined) return undefined
  for (const entry of entries) if (entry.tag === shaperTag) return entry.binding as ShaperBinding
  return undefined
}
