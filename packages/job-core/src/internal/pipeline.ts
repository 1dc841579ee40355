import type { Task, TaskFn } from '../types/task.js'
import { readBindings } from './bindings.js'
import { createTask, keepCallerTimeAndContext } from './create-task.js'
import { followedCall } from './followed-call.js'
import type {
  ResolvedRunOptions,
  ResumeReason,
  RuntimeCore,
  StageIndex,
  TaskRecord,
} from './model.js'
import { shapeStage } from './shaping.js'
import { dependencies } from './stages/dependencies.js'
import { dispatch } from './stages/dispatch.js'
import { execute } from './stages/execute.js'
import { queue } from './stages/queue.js'
import { DEPENDENCIES, DISPATCH, EXECUTE, QUEUE, SHAPE, type Stage } from './stages/stage.js'

/**
 * The order every call goes through, stated once:
 *
 * (follow) → shape → dispatch → dependencies → queue → execute → (settle)
 *
 * - follow: before any task is built, the plugin that claimed the call's
 *   only tag may merge it into a live peer (`ClaimOptions.followPeer`,
 *   `followed-call.ts`): the call ends there, as a task born `cancelled`
 *   whose promise is the peer's. Every other call becomes a task
 *   (`create-task.ts`) and enters the stages:
 * - shape: a time-window shaper may hold or merge the call (`stages/shape.ts`,
 *   installed by the first `withShaper` call: `shaping.ts`)
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
const STAGES: readonly Stage[] = [shapeStage, dispatch, dependencies, queue, execute]

/**
 * `run()` and `ctx.run()`, once the options are resolved: the call is
 * followed, or becomes a task that goes as far through the stages as it can
 * now, keeping the caller's async context if it has to wait.
 */
export function runCall(
  core: RuntimeCore,
  taskFn: TaskFn<unknown>,
  options: ResolvedRunOptions,
  parent: TaskRecord | undefined,
): Task<unknown> {
  // Read once: a call the follow step does not take goes on to be a task.
  const bindings = readBindings(taskFn)
  if (parent === undefined && core.followers !== 0) {
    const followed = followedCall(core, bindings, options)
    if (followed !== undefined) return followed
  }
  const task = createTask(core, taskFn, bindings, options, parent)
  if (task.outcome === undefined) {
    task.stage = SHAPE
    advance(task)
  }
  keepCallerTimeAndContext(task)
  return task.handle
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
