import { dependencies } from './stages/dependencies.js'
import { dispatch } from './stages/dispatch.js'
import { execute } from './stages/execute.js'
import { queue } from './stages/queue.js'
import { shape } from './stages/shape.js'
import { QUEUE, SHAPE, type Stage, type StageIndex } from './stages/stage.js'
import type { TaskRecord } from './task-record.js'

/**
 * The order every task goes through, stated once:
 *
 * shape → dispatch → dependencies → queue → execute → (settle)
 *
 * - shape: a time-window shaper may hold or merge the call (`stages/shape.ts`)
 * - dispatch: the plugin that claimed the taskFn's tag decides, or the loud-fail guard (`stages/dispatch.ts`)
 * - dependencies: waits for every `dependsOn` task to succeed (`stages/dependencies.ts`)
 * - queue: hands an attempt to the backend, which starts it when a slot is free (`stages/queue.ts`)
 * - execute: runs the body; a failed attempt may go back to queue after a retry delay (`stages/execute.ts`)
 * - settle: every ending goes through `stages/settle.ts`, whichever stage it comes from
 *
 * Each stage returns `'next'`, `'parked'` or `'ended'`. A stage never calls
 * the next one: whatever un-parks a task (a shaper window closing, a
 * coordinator's `proceed`, the last dependency succeeding, the backend
 * granting a slot, a retry delay passing) calls `advance` again.
 */
const STAGES: readonly Stage[] = [shape, dispatch, dependencies, queue, execute]

/**
 * Where a new task enters the pipeline: a taskFn with no tag and no
 * `dependsOn` has nothing to shape, dispatch or wait for, so it enters at
 * the queue stage (three calls fewer on the plain path; the stages it skips
 * would each only pass it on).
 */
export function entryStage(task: TaskRecord): StageIndex {
  return task.bindings === undefined && task.options.dependsOn === undefined ? QUEUE : SHAPE
}

export function advance(task: TaskRecord): void {
  while (task.outcome === undefined) {
    const result = STAGES[task.stage]!(task, advance)
    if (result !== 'next') return
    task.stage++
  }
}
