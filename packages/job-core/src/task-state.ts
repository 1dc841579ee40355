import type { TaskState, TerminalState } from './types/task.js'

/**
 * Whether `state` is one of the terminal states.
 *
 * @example
 * ```ts
 * isTerminalState('cancelled') // true
 * isTerminalState('queued') // false
 * ```
 */
export function isTerminalState(state: TaskState): state is TerminalState {
  return state === 'success' || state === 'error' || state === 'cancelled'
}

/**
 * Whether the kernel may move a task from `from` to `to` (the table in the package README). Any
 * non-terminal state may also go to `cancelled` or `error`.
 *
 * @example
 * ```ts
 * isLegalTransition('queued', 'running') // true
 * isLegalTransition('success', 'running') // false
 * ```
 */
export function isLegalTransition(from: TaskState, to: TaskState): boolean {
  // Every transition is checked, so this is a switch (compares of interned
  // strings), not a table: a keyed lookup by a varying state name goes
  // megamorphic and costs three times as much.
  const failed = to === 'cancelled' || to === 'error'
  switch (from) {
    case 'idle':
      return (
        failed ||
        to === 'queued' ||
        to === 'parked:shaper' ||
        to === 'parked:coordinator' ||
        to === 'parked:dependencies'
      )
    case 'parked:shaper':
      return failed || to === 'idle'
    case 'parked:coordinator':
      return failed || to === 'queued' || to === 'parked:dependencies'
    case 'parked:dependencies':
    case 'parked:retry':
      return failed || to === 'queued'
    case 'queued':
      return failed || to === 'running'
    case 'running':
      return failed || to === 'success' || to === 'parked:retry'
    default:
      return false
  }
}
