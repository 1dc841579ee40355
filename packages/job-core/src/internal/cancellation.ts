import type { CancelReason } from '../types/task.js'
import { backendError } from './backend-seam.js'
import { CancelledOutcome } from './cancelled-outcome.js'
import type { TaskRecord } from './model.js'
import { finish } from './stages/settle.js'

/** Who or what cancelled a task, besides the reason. */
export interface CancelOptions {
  readonly cancelledBy?: number | undefined
  readonly cause?: unknown
}

const NO_CANCEL_OPTIONS: CancelOptions = Object.freeze({})

/**
 * Ends a non-terminal task `cancelled` with `reason`: immediate for the
 * caller and the state machine, cooperative for a running body (its signal
 * aborts; it keeps its slot until it exits). A no-op on a terminal task.
 */
export function cancelTask(
  task: TaskRecord,
  reason: CancelReason,
  options: CancelOptions = NO_CANCEL_OPTIONS,
): void {
  cancelWith(task, reason, options.cancelledBy, 'cause' in options ? options : undefined)
}

/**
 * `cancelTask(task, reason, { cancelledBy: by })` without the options
 * object: a call merged into a peer (dedupe, superseded), the bulk of a burst.
 */
export function cancelTaskBy(task: TaskRecord, reason: CancelReason, by: number): void {
  cancelWith(task, reason, by, undefined)
}

function cancelWith(
  task: TaskRecord,
  reason: CancelReason,
  cancelledBy: number | undefined,
  caused: CancelOptions | undefined,
): void {
  if (task.outcome !== undefined) return
  const outcome = new CancelledOutcome(reason, task.id, cancelledBy, caused)
  // An abort's stack (where cancel() was called) is worth capturing now; merges build theirs on demand.
  if (task.job !== undefined || reason === 'abort') abortRunning(task, outcome.error)
  // The transition's extra only matters to a listener: a merge with nobody listening allocates none.
  finish(
    task,
    outcome,
    !task.core.bus.active
      ? undefined
      : cancelledBy === undefined
        ? { reason }
        : { reason, cancelledBy },
  )
}

/** Ends a non-terminal task in `error` (a total or queue timeout, the loud-fail guard, a lost lease). */
export function failTask(task: TaskRecord, error: unknown): void {
  if (task.outcome !== undefined) return
  abortRunning(task, error)
  finish(task, { status: 'error', error }, { error })
}

/** The running attempt no longer decides anything: its signal aborts with `reason`, its timer goes. */
export function abortRunning(task: TaskRecord, reason: unknown): void {
  // The body keeps its slot until it leaves; until then the task has not exited.
  task.job?.stop(reason)
}

/** The first settle callback of a parent: its children end with it, reason `parent`. */
export function cancelChildren(parent: TaskRecord): void {
  const children = parent.extras?.children
  if (children === undefined) return
  parent.extras!.children = undefined
  for (const child of [...children]) cancelTask(child, 'parent')
}

/**
 * The backend threw from `method`: a task still live ends in `error` with
 * it as `cause`; one that already ended keeps its outcome, and the error
 * goes to `console.error` (nothing else is left to carry it).
 */
export function backendThrew(
  task: TaskRecord,
  method: 'enqueue' | 'release',
  error: unknown,
): void {
  const failure = backendError(task, method, error)
  if (task.outcome === undefined) failTask(task, failure)
  else console.error(`[@vega/job-core] ${failure.message}`, error)
}
