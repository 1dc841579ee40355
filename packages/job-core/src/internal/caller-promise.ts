import type { Outcome } from '../task.js'
import { handled, isThenable } from './promises.js'
import type { TaskRecord } from './task-record.js'

// The task's own promise lives on the record (`own`, `resolveOwn`): every
// task may need it, so it costs no extra object. A task that waits behind a
// promise door gets it at once, derived from its context carrier (see
// `context-carrier.ts`); any other gets it when someone first asks. What a
// dispatch handler or a shaper substitutes for it is one promise in
// `task.caller`: a merged call (dedupe, superseded) allocates nothing to
// hold it.

/** What `task.promise` returns. */
export function callerPromise(task: TaskRecord): Promise<unknown> {
  return task.caller ?? ownPromise(task)
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
    task.own = new Promise(captureResolve)
    task.resolveOwn = capturedResolve
    capturedResolve = undefined
  }
  return task.own
}

/** The task ended: its own promise, if anyone made it, settles, once. */
export function settleOwn(task: TaskRecord, outcome: Outcome<unknown>): void {
  const resolve = task.resolveOwn
  if (resolve === undefined || resolve === OWN_NOT_HANDED_OUT || resolve === OWN_HANDED_OUT) return
  task.resolveOwn = undefined
  if (outcome.status === 'success') resolve(outcome.value)
  else {
    handled(task.own!)
    resolve(new Rejection(outcome.error))
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
  if (outcome === undefined) task.resolveOwn = resolve
  else if (outcome.status === 'success') resolve(outcome.value)
  else {
    handled(task.own!)
    reject(outcome.error)
  }
}

/**
 * Makes the caller's promise follow `value` (a handler's answer, a shaper
 * leader's promise). A rejected promise is marked handled, unless it is
 * known to be a task's caller promise (`guarded`: a native promise that
 * settles as handled on its own), which is taken as it is.
 */
export function substitute(task: TaskRecord, value: unknown, guarded = false): void {
  if (task.own !== undefined && value === task.own) {
    task.caller = undefined
    return
  }
  if (guarded) {
    task.caller = value as Promise<unknown>
    return
  }
  const promise = Promise.resolve(value)
  if (promise === value) handled(promise)
  else if (isThenable(value)) {
    // A foreign thenable: the promise adopting it is the one nobody may be listening to.
    handled(promise)
  }
  task.caller = promise
}

let capturedResolve: ((value: unknown) => void) | undefined

// Only the resolve function is kept: the engine makes both, and a task that
// waits would otherwise hold the reject function too (56 B of its ≈ 400).
// A failure resolves with a Rejection instead, which rejects the promise one
// microtask later than reject() would.
function captureResolve(resolve: (value: unknown) => void): void {
  capturedResolve = resolve
}

/**
 * What the own promise is resolved with when the task fails or is
 * cancelled: a thenable the promise adopts by rejecting with its error.
 */
class Rejection {
  readonly error: unknown

  constructor(error: unknown) {
    this.error = error
  }

  // biome-ignore lint/suspicious/noThenProperty: adopted by the own promise, which rejects with the error.
  then(_resolve: unknown, reject: (error: unknown) => void): void {
    reject(this.error)
  }
}
