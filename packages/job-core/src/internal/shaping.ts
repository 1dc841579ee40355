import type { TaskRecord } from './model.js'
import type { StageResult } from './stages/stage.js'

/** The shape stage and what undoes it, as `withShaper` installs them. */
export interface Shaping {
  /** The shape stage (see `stages/shape.ts`). */
  readonly shape: (task: TaskRecord) => StageResult
  /** A held call ends on its own: its window lets go of it (see `shaper-window.ts`). */
  readonly releaseHold: (task: TaskRecord) => void
}

/**
 * Shaping, once `withShaper` has been called in this copy of the package.
 * A shaped call can only come from `withShaper` (its tag is this copy's),
 * so before the first call nothing needs shaping, and an application that
 * never imports `withShaper` does not bundle the shaper windows.
 */
let installed: Shaping | undefined

export function installShaping(shaping: Shaping): void {
  installed = shaping
}

/** The shape stage: a call passes on unless shaping is installed and its window holds or merges it. */
export function shapeStage(task: TaskRecord): StageResult {
  return installed === undefined ? 'next' : installed.shape(task)
}

/** Called by the settle stage for a task that ends in `parked:shaper`. */
export function releaseShaperHold(task: TaskRecord): void {
  installed?.releaseHold(task)
}
