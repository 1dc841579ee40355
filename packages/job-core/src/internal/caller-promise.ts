import type { Outcome } from '../task.js'
import { noop } from './noop.js'
import { type Deferred, handled, isThenable } from './promises.js'
import { extrasOf } from './task-extras.js'
import type { TaskRecord } from './task-record.js'

// The task's own promise lives on the record (`own`, `resolveOwn`,
// `rejectOwn`): every task may need it, so it costs no extra object. A task
// that waits gets it at once, derived from its context carrier (see
// `context-carrier.ts`); one that starts inside run() gets it when someone
// first asks. What a dispatch handler or a shaper substitutes is rarer and
// lives in a `CallerSubstitute`.

/**
 * What the caller receives instead of the task's own result: a dispatch
 * handler's answer (a peer's promise), a shaper burst's shared promise.
 */
export class CallerSubstitute {
  value: unknown = undefined
  promise: Promise<unknown> | undefined = undefined
  /** A shaped task's burst promise, settled by whichever call of the burst survives. */
  held: Deferred<unknown> | undefined = undefined
  /** True while a dispatch handler decides: its answer, not the task's own result, settles a held burst. */
  deciding = false
  /** Whether `value` replaces the own promise (a held burst alone does not, until it is settled). */
  active = false
}

/** What `task.promise` returns. */
export function callerPromise(task: TaskRecord): Promise<unknown> {
  const state = task.extras?.substitute
  if (state === undefined || !state.active) return ownPromise(task)
  state.promise ??= Promise.resolve(state.value)
  return state.promise
}

/**
 * Markers in `resolveOwn` for an own promise that comes from the context
 * carrier (see `context-carrier.ts`) and waits to adopt the task: not yet
 * handed to anyone, or handed out. Only a handed-out one is worth settling;
 * one nobody holds is dropped — a merged call then builds no
 * `CancelledError` and rejects nothing.
 */
export const OWN_NOT_HANDED_OUT = (): void => {}
export const OWN_HANDED_OUT = (): void => {}

/** The task's own result: what its body produced, or how it ended. */
export function ownPromise(task: TaskRecord): Promise<unknown> {
  if (task.own !== undefined) {
    if (task.resolveOwn === OWN_NOT_HANDED_OUT) task.resolveOwn = OWN_HANDED_OUT
    return task.own
  }
  const outcome = task.outcome
  if (outcome !== undefined) {
    task.own =
      outcome.status === 'success'
        ? Promise.resolve(outcome.value)
        : handled(Promise.reject(outcome.error))
  } else {
    task.own = new Promise(captureResolvers)
    task.resolveOwn = capturedResolve
    task.rejectOwn = capturedReject
    capturedResolve = capturedReject = undefined
  }
  return task.own
}

/** The task ended: its own promise, if anyone made it, settles, once. */
export function settleOwn(task: TaskRecord, outcome: Outcome<unknown>): void {
  const resolve = task.resolveOwn
  if (resolve === undefined || resolve === OWN_NOT_HANDED_OUT || resolve === OWN_HANDED_OUT) return
  const reject = task.rejectOwn!
  task.resolveOwn = task.rejectOwn = undefined
  if (outcome.status === 'success') resolve(outcome.value)
  else {
    handled(task.own!)
    reject(outcome.error)
  }
}

/**
 * The own promise of a task that waited follows the task through this
 * adoption step (a thenable's `then`, called once by the promise machinery):
 * it receives the promise's resolvers, or settles it at once if the task
 * has ended.
 */
export function adoptOwn(
  task: TaskRecord,
  resolve: (value: unknown) => void,
  reject: (error: unknown) => void,
): void {
  const outcome = task.outcome
  if (outcome === undefined) {
    task.resolveOwn = resolve
    task.rejectOwn = reject
  } else if (outcome.status === 'success') resolve(outcome.value)
  else {
    handled(task.own!)
    reject(outcome.error)
  }
}

function substituteOf(task: TaskRecord): CallerSubstitute {
  const extras = extrasOf(task)
  extras.substitute ??= new CallerSubstitute()
  return extras.substitute
}

/**
 * Makes the caller's promise follow `value` (a handler's answer, a shaper's
 * survivor). A thenable is marked handled, unless it is known to be a task's
 * caller promise (`guarded`), which settles as handled on its own.
 */
export function substitute(task: TaskRecord, value: unknown, guarded = false): void {
  const isOwn = task.own !== undefined && value === task.own
  if (!isOwn && !guarded && isThenable(value)) value.then(undefined, noop)
  const held = task.extras?.substitute?.held
  if (held !== undefined) {
    task.extras!.substitute!.held = undefined
    held.resolve(value)
    return
  }
  if (isOwn) return
  const state = substituteOf(task)
  state.value = value
  state.promise = undefined
  state.active = true
}

/**
 * A shaped task's caller promise must exist before its fate does: a caller
 * who awaits it early follows whichever call survives the window. Every
 * call of one burst shares `burst`, which the survivor settles.
 */
export function holdCaller(task: TaskRecord, burst: Deferred<unknown>): void {
  const state = substituteOf(task)
  state.held = burst
  state.value = burst.promise
  state.promise = undefined
  state.active = true
}

/** A merged call keeps the burst's promise but leaves settling it to the survivor. */
export function letGoOfCaller(task: TaskRecord): void {
  const state = task.extras?.substitute
  if (state !== undefined) state.held = undefined
}

/** While a dispatch handler decides, a held burst waits for its answer. */
export function setDeciding(task: TaskRecord, deciding: boolean): void {
  // Only a held burst cares, and holding comes before dispatch.
  const state = task.extras?.substitute
  if (state !== undefined) state.deciding = deciding
}

/** The held burst follows this task's own result, if it still waits for one. */
export function releaseHeldCaller(task: TaskRecord): void {
  const state = task.extras?.substitute
  if (state?.held !== undefined && !state.deciding) substitute(task, ownPromise(task))
}

let capturedResolve: ((value: unknown) => void) | undefined
let capturedReject: ((error: unknown) => void) | undefined

function captureResolvers(
  resolve: (value: unknown) => void,
  reject: (error: unknown) => void,
): void {
  capturedResolve = resolve
  capturedReject = reject
}
