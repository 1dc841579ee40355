import { callerPromise, substitute } from '../caller-promise.js'
import { cancelTaskBy } from '../cancellation.js'
import type { TaskRecord } from '../model.js'
import { deferred, handled } from '../promises.js'
import { mergeHeld, ShaperWindow, shaperBindingOf } from '../shaper-window.js'
import type { StageResult } from './stage.js'

/**
 * A shaped task is held, merged or let through by its window; anything else
 * goes on. Merged calls are never dispatched: no second intent reaches a
 * coordinator.
 */
export function shape(task: TaskRecord): StageResult {
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
    const window = new ShaperWindow(core, shaper, hash, windows, closeWindow)
    windows.set(hash, window)
    window.timer = core.clock.setTimeout(window.close, shaper.ms)
    if (shaper.leading) {
      window.leader = task
      return 'next'
    }
    hold(window, task)
    return 'parked'
  }
  let result: StageResult
  if (shaper.trailing) {
    const previous = open.pending
    if (previous !== undefined) {
      // Merged, not withdrawn: the burst goes on. Its caller keeps the
      // burst's promise, which this call will settle.
      open.pending = undefined
      // The burst shares one promise: whoever observed a merged call observes the survivor.
      if (previous.observed) task.observed = true
      mergeHeld(previous, task.id, cancelTaskBy)
    }
    hold(open, task)
    result = 'parked'
  } else {
    const leader = open.leader!
    // A task's caller promise settles handled on its own: no marker reaction needed.
    substitute(task, leader.handle.promise, true)
    cancelTaskBy(task, 'superseded', leader.id)
    result = 'ended'
  }
  if (shaper.kind === 'debounce') {
    // Holding the call read the clock (an ended call's time is not kept).
    const now = result === 'parked' ? task.since : core.clock.now()
    // Later, never earlier (maxWait ≥ ms): the timer is left as it is, and
    // catches up when it fires (closeWindow), so a burst arms a timer or
    // two per window, not one per call.
    open.dueAt =
      shaper.maxWait === undefined
        ? now + shaper.ms
        : Math.min(now + shaper.ms, open.openedAt + shaper.maxWait)
  }
  return result
}

function hold(window: ShaperWindow, task: TaskRecord): void {
  window.pending = task
  let burst = window.burst
  if (burst === undefined) {
    burst = deferred<unknown>()
    handled(burst.promise)
    window.burst = burst
  }
  task.caller = burst.promise
  task.moveTo('parked:shaper')
}

function closeWindow(window: ShaperWindow): void {
  const { core, shaper, windows, hash } = window
  if (windows.get(hash) !== window) return
  if (shaper.kind === 'debounce') {
    // Calls since the timer was armed moved the window's end: wait for the rest.
    const left = window.dueAt - core.clock.now()
    if (left > 0) {
      window.timer = core.clock.setTimeout(window.close, left)
      return
    }
  }
  const trailing = window.pending
  const burst = window.burst
  window.pending = undefined
  window.burst = undefined
  if (trailing !== undefined && shaper.kind === 'throttle') {
    // A trailing throttle dispatch is the first call of the next window.
    window.leader = trailing
    window.openedAt = core.clock.now()
    window.timer = core.clock.setTimeout(window.close, shaper.ms)
  } else {
    windows.delete(hash)
    if (windows.size === 0) core.shaperWindows.delete(shaper)
  }
  if (trailing === undefined || trailing.state !== 'parked:shaper') return
  // Released: while it is dispatched, its caller promise is its own (or
  // what a dispatch handler answers); the burst then follows that.
  trailing.caller = undefined
  trailing.moveTo('idle')
  core.resume(trailing, 'shaper-released')
  const result = callerPromise(trailing)
  trailing.caller = burst!.promise
  burst!.resolve(result)
}
