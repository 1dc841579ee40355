import type { TaskRecord } from '../task-record.js'

/**
 * What a stage did with a task: passed it on, parked it (whatever un-parks it
 * calls `task.core.resume`), or ended it (a terminal state).
 */
export type StageResult = 'next' | 'parked' | 'ended'

/** One step of the pipeline. */
export type Stage = (task: TaskRecord) => StageResult

export const SHAPE = 0
export const DISPATCH = 1
export const DEPENDENCIES = 2
export const QUEUE = 3
export const EXECUTE = 4

/** Where a task stands in the pipeline: the stage it runs next (an index into `pipeline.ts`'s list). */
export type StageIndex =
  | typeof SHAPE
  | typeof DISPATCH
  | typeof DEPENDENCIES
  | typeof QUEUE
  | typeof EXECUTE

/**
 * What un-parked a task, as `task.core.resume(task, why)` is told; the
 * pipeline decides where it goes on.
 */
export type ResumeReason =
  /** A shaper window closed on it: its survivor is dispatched. */
  | 'shaper-released'
  /** A dispatch handler called `proceed()`. */
  | 'proceeded'
  /** The last of its `dependsOn` tasks succeeded. */
  | 'dependencies-met'
  /** A retry delay passed. */
  | 'retry-due'
  /** The backend granted the waiting attempt a slot. */
  | 'slot-granted'

/** Runs the pipeline again for a task that was parked; see `pipeline.ts`. */
export type Resume = (task: TaskRecord, why: ResumeReason) => void
