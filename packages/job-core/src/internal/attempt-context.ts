import type { RunOptions, Task, TaskContext, TaskFn } from '../types/task.js'
import type { Attempt } from './attempt.js'
import { sleepOn } from './sleep.js'

/** Refuses a `ctx` made outside the kernel (`new ctx.constructor(…)`). */
const MADE_BY_KERNEL: unique symbol = Symbol('AttemptContext')

/**
 * The `ctx` a body receives: `TaskContext` and nothing else. The attempt
 * behind it (its slot, its timer, its task) is out of reach (`#attempt`),
 * and the object is frozen.
 */
export class AttemptContext implements TaskContext {
  readonly taskId: number
  /** 1-based: the attempts of the task started before this one, plus one. */
  readonly attempt: number
  readonly #attempt: Attempt

  constructor(made: typeof MADE_BY_KERNEL, attempt: Attempt) {
    if (made !== MADE_BY_KERNEL) {
      throw new TypeError(
        'A TaskContext is made by the runtime for a body; it has no public constructor.',
      )
    }
    this.taskId = attempt.task.id
    this.attempt = attempt.number
    this.#attempt = attempt
    Object.freeze(this)
  }

  get signal(): AbortSignal {
    return this.#attempt.readSignal()
  }

  sleep(ms: number): Promise<void> {
    return sleepOn(this.signal, this.#attempt.task.core.clock, ms)
  }

  run<U>(taskFn: TaskFn<U>, options?: RunOptions): Task<U> {
    if (typeof taskFn !== 'function') {
      throw new TypeError(`ctx.run(taskFn): taskFn must be a function, got ${typeof taskFn}.`)
    }
    const task = this.#attempt.task
    return task.core.runTask(taskFn, options, 'ctx.run', task)
  }
}
Object.freeze(AttemptContext.prototype)

/** The `ctx` of `attempt`'s body. */
export function contextFor(attempt: Attempt): AttemptContext {
  return new AttemptContext(MADE_BY_KERNEL, attempt)
}
