import type { TaskRecord } from '../task-record.js'

/**
 * What a stage did with a task: passed it on, parked it (whatever un-parks it
 * calls the pipeline again), or ended it (a terminal state).
 */
export type StageResult = 'next' | 'parked' | 'ended'

/** Runs the pipeline from the task's current stage; see `pipeline.ts`. */
export type Advance = (task: TaskRecord) => void

/** One step of the pipeline. */
export type Stage = (task: TaskRecord, advance: Advance) => StageResult

export const SHAPE = 0
export const DISPATCH = 1
export const DEPENDENCIES = 2
export const QUEUE = 3
export const EXECUTE = 4

/** Where a task stands in the pipeline: the stage it runs next. */
export type StageIndex =
  | typeof SHAPE
  | typeof DISPATCH
  | typeof DEPENDENCIES
  | typeof QUEUE
  | typeof EXECUTE
