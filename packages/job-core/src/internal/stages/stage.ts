import type { StageIndex, TaskRecord } from '../model.js'

/**
 * What a stage did with a task: passed it on, parked it (whatever un-parks it
 * calls `task.core.resume`), or ended it (a terminal state).
 */
export type StageResult = 'next' | 'parked' | 'ended'

/** One step of the pipeline. */
export type Stage = (task: TaskRecord) => StageResult

/** The stages by their index in `pipeline.ts`'s list (a record's `stage`). */
export const SHAPE: StageIndex = 0
export const DISPATCH: StageIndex = 1
export const DEPENDENCIES: StageIndex = 2
export const QUEUE: StageIndex = 3
export const EXECUTE: StageIndex = 4
