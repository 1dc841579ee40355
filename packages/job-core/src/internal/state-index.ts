import { isLegalTransition, type TaskState } from '../task-state.js'

// A record keeps its state as a 4-bit index inside its packed small
// integer (see `TaskWord`), not as a string field of its own: 8 B
// less on every task. `idle` is 0, so a new record's packed word of 0 is idle.

/** Every state by its index. */
export const STATE_NAMES: readonly TaskState[] = [
  'idle',
  'parked:shaper',
  'parked:coordinator',
  'parked:dependencies',
  'queued',
  'running',
  'parked:retry',
  'success',
  'error',
  'cancelled',
]

/** The index of `queued`. */
export const QUEUED_INDEX: number = STATE_NAMES.indexOf('queued')

/** The index of `success`; `error` and `cancelled` follow it: an index from here on is terminal. */
export const FIRST_TERMINAL: number = STATE_NAMES.indexOf('success')

/**
 * The index of `state` in {@link STATE_NAMES}. A switch on interned
 * strings, not a table: a keyed lookup by a varying name goes megamorphic.
 */
export function stateIndexOf(state: TaskState): number {
  switch (state) {
    case 'idle':
      return 0
    case 'parked:shaper':
      return 1
    case 'parked:coordinator':
      return 2
    case 'parked:dependencies':
      return 3
    case 'queued':
      return 4
    case 'running':
      return 5
    case 'parked:retry':
      return 6
    case 'success':
      return 7
    case 'error':
      return 8
    case 'cancelled':
      return 9
    default:
      throw new TypeError(`Unknown task state ${String(state)}.`)
  }
}

/**
 * Per state index, the states it may move to, one bit per index: the legal
 * transitions of `isLegalTransition`, read once, so a transition is checked
 * with a mask instead of string compares.
 */
export const LEGAL_NEXT: readonly number[] = STATE_NAMES.map((from) =>
  STATE_NAMES.reduce(
    (mask, to, index) => (isLegalTransition(from, to) ? mask | (1 << index) : mask),
    0,
  ),
)
