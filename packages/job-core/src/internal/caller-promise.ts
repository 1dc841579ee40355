import type { Outcome } from '../types/outcome.js'
import type { TaskRecord } from './model.js'
import { handled, isThenable } from './promises.js'

// The task's own promise lives on the record (`own`, with its resolvers
// while pending), made when someone first asks. What a dispatch handler or
// a shaper substitutes for it is one promise in `task.caller`.

/** What `task.promise` returns. */
export function callerPromise(task: TaskRecord): Promise<unknown> {
  return task.caller ?? ownPromise(task)
}

/** The task's own result: what its body produced, or how it ended. */
export function ownPromise(task: TaskRecord): Promise<unknown> {
  if (task.own !== undefined) return task.own
  const outcome = task.outcome
  if (outcome === undefined) {
    task.own = new Promise((resolve) => {
      task.resolveOwn = resolve
    })
  } else {
    task.own =
      outcome.status === 'success'
        ? Promise.resolve(outcome.value)
        : handled(Promise.reject(outcome.error))
  }
  return task.own
}

/** The task ended: its own promise, if anyone made it, settles, once. */
export function settleOwn(task: TaskRecord, outcome: Outcome<unknown>): void {
  const resolve = task.resolveOwn
  if (resolve === undefined) return
  task.resolveOwn = undefined
  if (outcome.status === 'success') resolve(outcome.value)
  else {
    // Whoever holds the own promise observes it; a merged call's caller
    // holds its peer's, so a rejection here must not count as unhandled.
    // Settled by adopting a rejected promise: the record keeps one resolver,
    // not two.
    handled(task.own!)
    resolve(handled(Promise.reject(outcome.error)))
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
