import { dependencies } from './stages/dependencies.js'
import { dispatch } from './stages/dispatch.js'
import { execute } from './stages/execute.js'
import { queue } from './stages/queue.js'
import { shape } from './stages/shape.js'
import {
  DEPENDENCIES,
  DISPATCH,
  EXECUTE,
  QUEUE,
  type ResumeReason,
  SHAPE,
  type Stage,
  type StageIndex,
} from './stages/stage.js'
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
 * Each stage returns `'next'`, `'parked'` or `'ended'`, and a stage with
 * nothing to do for a task passes it on. A stage never calls the next one:
 * whatever un-parks a task calls `task.core.resume(task, why)`, and
 * {@link resume} below says where each reason goes on.
 */
const STAGES: readonly Stage[] = [shape, dispatch, dependencies, queue, execute]

/** A new task enters the pipeline at its first stage. */
export function enterPipeline(task: TaskRecord): void {
  task.stage = SHAPE
  advance(task)
}

/** Where a task goes on after each way of leaving a parked stage. */
function resumesAt(why: ResumeReason): StageIndex {
  switch (why) {
    case 'shaper-released':
      return DISPATCH
    case 'proceeded':
      return DEPENDENCIES
    case 'dependencies-met':
    case 'retry-due':
      return QUEUE
    case 'slot-granted':
      return EXECUTE
  }
}

/** A parked task goes on, from the stage its reason leads to (the runtime's `resume`). */
export function resume(task: TaskRecord, why: ResumeReason): void {
  task.stage = resumesAt(why)
  advance(task)
}

function advance(task: TaskRecord): void {
  while (task.outcome === undefined) {
    const result = STAGES[task.stage]!(task)
    if (result !== 'next') return
    task.stage++
  }
}
