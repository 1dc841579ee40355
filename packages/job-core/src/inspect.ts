import { inspectCore } from './internal/inspection.js'
import { toCore } from './internal/runtime-core.js'
import type { Runtime } from './runtime.js'
import type { TaskState } from './task-state.js'

/**
 * One live task as {@link inspect} reports it.
 *
 * @example
 * ```ts
 * const [first]: readonly TaskSnapshot[] = inspect(runtime).tasks
 * ```
 */
export interface TaskSnapshot {
  readonly id: number
  readonly label: string | undefined
  readonly state: TaskState
  /** The key hash a binding gave the task, if any. */
  readonly key: string | undefined
  readonly attempt: number
  readonly parentId: number | undefined
  /** Clock time at which the task entered its current state. */
  readonly since: number
}

/**
 * A point-in-time view of a runtime: its live tasks and the size of every
 * internal structure. Once every task has settled, all sizes are zero: use
 * it to prove that nothing leaks.
 *
 * @example
 * ```ts
 * const { sizes } = inspect(runtime)
 * console.log(`${sizes.liveTasks} live, ${sizes.queued} queued, ${sizes.runningBodies} running`)
 * ```
 */
export interface RuntimeInspection {
  readonly name: string
  readonly closed: boolean
  /** Non-terminal tasks, in creation order. */
  readonly tasks: readonly TaskSnapshot[]
  readonly sizes: {
    readonly liveTasks: number
    /** Attempts waiting in the backend for a slot. */
    readonly queued: number
    /** Slots the backend counts as taken. */
    readonly slotsInUse: number
    /** Bodies started and not yet exited, cancelled ones included. */
    readonly runningBodies: number
    /** Open shaper windows, over all shapers and keys. */
    readonly shaperWindows: number
    readonly listeners: number
    /** Wrappers installed with `wrapAttempts`. */
    readonly attemptWrappers: number
  }
  /** The `seq` of the last emitted event (0 if none). */
  readonly lastSeq: number
}

/**
 * Reports the runtime's live tasks and internal sizes, for devtools
 * snapshots, tests and leak checks.
 *
 * @example
 * ```ts
 * await settle(task)
 * inspect(runtime).sizes.liveTasks // 0
 * ```
 */
export function inspect(runtime: Runtime): RuntimeInspection {
  return inspectCore(toCore(runtime, 'inspect(runtime)'))
}
