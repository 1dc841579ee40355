/**
 * Every state a task can be in. Exactly one of `success`, `error`, `cancelled`
 * is reached, once, and never left.
 *
 * @example
 * ```ts
 * const task = run(runtime, async () => 1)
 * if (task.state === 'queued') console.log('waiting for a slot')
 * ```
 */
export type TaskState =
  | 'idle'
  | 'parked:shaper'
  | 'parked:coordinator'
  | 'parked:dependencies'
  | 'queued'
  | 'running'
  | 'parked:retry'
  | 'success'
  | 'error'
  | 'cancelled'

/**
 * The three states a task ends in.
 *
 * @example
 * ```ts
 * const done: TerminalState = 'success'
 * ```
 */
export type TerminalState = 'success' | 'error' | 'cancelled'

/**
 * Why a task was cancelled. Plugins may add their own reasons, hence the open
 * `string & {}` member.
 *
 * @example
 * ```ts
 * if (task.cancelReason === 'dedupe') console.log('merged into a peer')
 * ```
 */
export type CancelReason =
  | 'abort'
  | 'dedupe'
  | 'exhaust-dropped'
  | 'orphaned-intent'
  | 'superseded'
  | 'dependency'
  | 'parent'
  | 'shutdown'
  | 'overflow'
  | (string & {})

const TERMINAL: ReadonlySet<TaskState> = new Set<TaskState>(['success', 'error', 'cancelled'])

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
  return TERMINAL.has(state)
}

const FORWARD: Readonly<Record<TaskState, readonly TaskState[]>> = {
  idle: ['parked:shaper', 'parked:coordinator', 'parked:dependencies', 'queued'],
  'parked:shaper': ['idle'],
  'parked:coordinator': ['parked:dependencies', 'queued'],
  'parked:dependencies': ['queued'],
  queued: ['running'],
  running: ['success', 'error', 'parked:retry'],
  'parked:retry': ['queued'],
  success: [],
  error: [],
  cancelled: [],
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
  return LEGAL[from][to] === true
}

// Precomputed from FORWARD: the kernel checks every transition, so the check is two property reads.
const LEGAL: Readonly<Record<TaskState, Partial<Record<TaskState, true>>>> = Object.fromEntries(
  (Object.keys(FORWARD) as TaskState[]).map((from) => {
    const allowed: Partial<Record<TaskState, true>> = {}
    if (!TERMINAL.has(from)) {
      for (const to of [...FORWARD[from], 'cancelled', 'error'] as TaskState[]) allowed[to] = true
    }
    return [from, allowed]
  }),
) as Record<TaskState, Partial<Record<TaskState, true>>>
