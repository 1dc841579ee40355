// What a runtime reports about itself: counts, live tasks, sizes.

import type { RuntimeListener } from './events.js'
import type { TaskState } from './task.js'

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
  /**
   * Clock time at which the task entered its current state (with the system
   * clock, a reading it may share with the other transitions of its
   * synchronous stretch; see the package README, Events).
   */
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
 * How much work a runtime holds now, read from counters the kernel keeps as
 * tasks move (nothing is walked or built but this object).
 *
 * @example
 * ```ts
 * const { queued, running } = counts(runtime)
 * if (queued > 100) response.status(503)
 * ```
 */
export interface RuntimeCounts {
  /** Tasks not yet in a terminal state. */
  readonly live: number
  /** Live tasks neither queued nor running: parked (shaper, coordinator, dependencies, retry) or being dispatched. */
  readonly parked: number
  /** Tasks waiting for a slot (or for a paused or rate-limited runtime). */
  readonly queued: number
  /** Bodies holding a slot, a cancelled body that has not exited yet included. */
  readonly running: number
  /** The part of `running` whose task has already ended (cancelled or timed out, body still inside). */
  readonly exiting: number
}

/**
 * What tools read from a runtime without importing `@vega/job-core` at run
 * time: a devtools bridge whose dependency on core is optional reads it from
 * `runtime[Symbol.for(RUNTIME_INSPECTOR_KEY)]`, a string protocol that works
 * across copies of the package.
 *
 * @example
 * ```ts
 * const inspector = getRuntimeInspector(runtime)
 * inspector.subscribe((e) => send(e))
 * console.log(inspector.lib, inspector.inspect().tasks.length, inspector.now())
 * ```
 */
export interface RuntimeInspector {
  /** `@vega/job-core@<version>` of the core that created the runtime. */
  readonly lib: string
  readonly name: string
  subscribe(listener: RuntimeListener): () => void
  inspect(): RuntimeInspection
  /** The runtime clock's time, the same as events' `at`. */
  now(): number
}
