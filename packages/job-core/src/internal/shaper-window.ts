import type { TimerHandle } from '../types/backend.js'
import type { Shaper } from '../types/shaper.js'
import { bindingOf } from './bindings.js'
import { ownPromise } from './caller-promise.js'
import type { RuntimeCore, ShaperWindow as ShaperWindowShape, TaskRecord } from './model.js'
import type { Deferred } from './promises.js'
import { type ShaperBinding, shaperTag } from './shaper-tag.js'

/**
 * One open window of one shaper for one key in one runtime. Everything a
 * burst needs lives here, not on its calls: a held call is only the
 * window's `pending` and carries the burst's promise in `task.caller`, so
 * holding, merging and releasing allocate nothing per call.
 */
export class ShaperWindow implements ShaperWindowShape {
  /** The call that will be dispatched when the window ends (trailing edge). */
  pending: TaskRecord | undefined = undefined
  /** The call dispatched at the leading edge of this window. */
  leader: TaskRecord | undefined = undefined
  timer: TimerHandle = undefined
  openedAt: number
  /**
   * When a debounce window ends: each call moves it later without touching
   * the timer, which re-arms for what is left when it fires.
   */
  dueAt: number
  /** The caller promise every held call of the current burst shares; the survivor settles it. */
  burst: Deferred<unknown> | undefined = undefined
  /** The window's timer callback, made once: re-arming it allocates no closure. */
  readonly close: () => void

  constructor(
    readonly core: RuntimeCore,
    readonly shaper: Shaper,
    readonly hash: string,
    /** The map of its shaper this window sits in (under `hash`). */
    readonly windows: Map<string, ShaperWindow>,
    onClose: (window: ShaperWindow) => void,
  ) {
    this.openedAt = core.clock.now()
    this.dueAt = this.openedAt + shaper.ms
    this.close = () => onClose(this)
  }
}

/** The shaper binding of a task, if its taskFn carries one. */
export function shaperBindingOf(task: TaskRecord): ShaperBinding | undefined {
  return bindingOf(task.bindings, shaperTag)
}

/** The held call its window is merging right now (see `mergeHeld`): its ending releases nothing. */
let merging: TaskRecord | undefined

/**
 * Cancels `previous`, superseded by task `by`, through `cancel` (core's
 * `cancelTaskBy`, passed in: this module sits below the settle stage). The
 * window has already let go of it, so the settle stage skips the lookup.
 */
export function mergeHeld(
  previous: TaskRecord,
  by: number,
  cancel: (task: TaskRecord, reason: 'superseded', by: number) => void,
): void {
  merging = previous
  try {
    cancel(previous, 'superseded', by)
  } finally {
    merging = undefined
  }
}

/**
 * A held call ends on its own (cancelled, timed out, shut down) while it is
 * its window's pending call: its burst settles with that ending, and later
 * calls start a new one. Called by the settle stage for a task that leaves
 * `parked:shaper`; a call the window itself merged is no longer `pending`.
 */
export function releaseHold(task: TaskRecord): void {
  if (task === merging) return
  const binding = shaperBindingOf(task)
  if (binding === undefined) return
  const window = task.core.shaperWindows.get(binding.shaper)?.get(binding.hash)
  if (window === undefined || window.pending !== task) return
  const burst = window.burst!
  window.pending = undefined
  window.burst = undefined
  burst.resolve(ownPromise(task))
}
