import type { AttemptInfo, AttemptWrapper } from '../types/plugin.js'
import type { AttemptJob, TaskRecord } from './model.js'
import { isThenable } from './promises.js'

/** How far one wrapper got with its `enter()`. */
type Entry =
  | { readonly kind: 'not-entered' }
  | { readonly kind: 'returned'; readonly value: unknown }
  | { readonly kind: 'threw'; readonly error: unknown }

/**
 * Calls the body of `job` through the runtime's attempt wrappers (see
 * `wrapAttempts`), outermost first. Returns what the body returned, or
 * throws what it threw: the wrappers can add context around the body, never
 * change its outcome, except by failing the attempt with their own error.
 */
export function enterThroughWrappers(
  wrappers: readonly AttemptWrapper[],
  task: TaskRecord,
  job: AttemptJob,
): unknown {
  const info: AttemptInfo = { task: task.handle, attempt: job.attempt }
  const enterAt = (index: number): unknown => {
    if (index === wrappers.length) return task.body(job)
    // Written by the enter() closure; read after the wrapper returns.
    let entry = { kind: 'not-entered' } as Entry
    let wrapperError: { readonly error: unknown } | undefined
    try {
      wrappers[index]!(info, () => {
        if (entry.kind !== 'not-entered') {
          throw new TypeError(
            `wrapAttempts: a wrapper called enter() twice for task #${task.id}, attempt ${job.attempt}; the body runs once.`,
          )
        }
        try {
          const value = enterAt(index + 1)
          entry = { kind: 'returned', value }
          return value
        } catch (error) {
          entry = { kind: 'threw', error }
          throw error
        }
      })
    } catch (error) {
      // The body's own throw, passed on by the wrapper, is the body's outcome below.
      if (entry.kind !== 'threw' || entry.error !== error) wrapperError = { error }
    }
    const settled = entry
    if (settled.kind === 'not-entered') {
      if (wrapperError !== undefined) throw wrapperError.error
      throw new TypeError(
        `wrapAttempts: a wrapper returned without calling enter() for task #${task.id}, attempt ${job.attempt}; the body never ran.`,
      )
    }
    if (wrapperError === undefined) {
      if (settled.kind === 'threw') throw settled.error
      return settled.value
    }
    // The wrapper failed after the body entered: the attempt fails with its
    // error, but only once the body has left (its slot stays honest).
    const failure = wrapperError.error
    const fail = (): never => {
      throw failure
    }
    if (settled.kind === 'returned' && isThenable(settled.value)) {
      return Promise.resolve(settled.value).then(fail, fail)
    }
    return fail()
  }
  return enterAt(0)
}
