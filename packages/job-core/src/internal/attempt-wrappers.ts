import type { AttemptInfo, AttemptWrapper } from '../types/plugin.js'
import type { TaskContext } from '../types/task.js'
import type { TaskRecord } from './model.js'
import { isThenable } from './promises.js'

/** How far one wrapper got with its `enter()`. */
type Entry =
  | { readonly kind: 'not-entered' }
  | { readonly kind: 'returned'; readonly value: unknown }
  | { readonly kind: 'threw'; readonly error: unknown }

/**
 * Calls the body of `task` with `ctx` through the runtime's attempt
 * wrappers (see `wrapAttempts`), outermost first. Returns what the body
 * returned, or throws what it threw: the wrappers can add context around
 * the body, never change its outcome, except by failing the attempt with
 * their own error.
 *
 * Each wrapper's `enter` is armed only while the wrapper runs: once the
 * wrapper has returned (or thrown), its attempt is decided and its slot
 * accounted for, so a late `enter()` (from a promise callback, a timer) is
 * refused with a `TypeError` and the body never runs outside its slot.
 * A second `enter()` is refused the same way: the body runs once.
 */
export function enterThroughWrappers(
  wrappers: readonly AttemptWrapper[],
  task: TaskRecord,
  ctx: TaskContext,
): unknown {
  const info: AttemptInfo = Object.freeze({ task: task.handle, attempt: ctx.attempt })
  const enterAt = (index: number): unknown => {
    if (index === wrappers.length) return task.body(ctx)
    // Written by the enter() closure; read after the wrapper returns.
    let entry = { kind: 'not-entered' } as Entry
    let armed = true
    let wrapperError: { readonly error: unknown } | undefined
    try {
      wrappers[index]!(info, () => {
        if (!armed) {
          throw new TypeError(
            `wrapAttempts: a wrapper called enter() after it returned, for task #${task.id}, attempt ${ctx.attempt}; ` +
              'the attempt was already decided without its body, which does not run. Call enter() synchronously, inside the wrapper, and return what it returns.',
          )
        }
        if (entry.kind !== 'not-entered') {
          throw new TypeError(
            `wrapAttempts: a wrapper called enter() twice for task #${task.id}, attempt ${ctx.attempt}; the body runs once.`,
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
    } finally {
      armed = false
    }
    const settled = entry
    if (settled.kind === 'not-entered') {
      if (wrapperError !== undefined) throw wrapperError.error
      throw new TypeError(
        `wrapAttempts: a wrapper returned without calling enter() for task #${task.id}, attempt ${ctx.attempt}; the body never ran. ` +
          'Call enter() synchronously, inside the wrapper (a later call is refused).',
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
