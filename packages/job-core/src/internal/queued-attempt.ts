import type { BackendJob } from '../types/backend.js'
import type { Task, TaskFn } from '../types/task.js'
import type { Attempt } from './attempt.js'
import { JOB_BINDINGS, type TaskBindings } from './bindings.js'

let bindingsOf: (job: QueuedAttempt) => TaskBindings | undefined

/** Refuses a job made outside the kernel (`new job.constructor(…)`). */
const MADE_BY_KERNEL: unique symbol = Symbol('QueuedAttempt')

/**
 * What a backend is handed for one attempt of a task: the `BackendJob`
 * protocol's members and nothing else (the attempt and its task stay
 * private), frozen. The backend gets the same object back in `withdraw`
 * and `release`, so it may key its bookkeeping on it. Every attempt waits
 * behind its own, so a late grant of an earlier attempt can never start a
 * later one. `start()` is the attempt's (`attempt.ts`): it takes the slot
 * once, and refuses a second call.
 */
export class QueuedAttempt implements BackendJob {
  readonly #attempt: Attempt

  static {
    bindingsOf = (job) => job.#attempt.task.bindings
  }

  constructor(made: typeof MADE_BY_KERNEL, attempt: Attempt) {
    if (made !== MADE_BY_KERNEL) {
      throw new TypeError(
        'A BackendJob is made by the runtime for its backend; it has no public constructor.',
      )
    }
    this.#attempt = attempt
    Object.freeze(this)
  }

  get task(): Task<unknown> {
    return this.#attempt.task.handle
  }

  get priority(): number {
    return this.#attempt.task.options.priority
  }

  get taskFn(): TaskFn<unknown> {
    return this.#attempt.task.taskFn
  }

  /** The backend grants a slot (see `Attempt.start`). */
  start(): void {
    this.#attempt.start()
  }
}

// `readTaskTag(job, tag)` reads the layers through this symbol, without
// rebuilding `taskFn`. Set on the prototype, not declared in the class: a
// symbol-keyed class member has no declaration the package's isolated .d.ts
// build can emit.
Object.defineProperty(QueuedAttempt.prototype, JOB_BINDINGS, {
  get(this: QueuedAttempt) {
    return bindingsOf(this)
  },
})
Object.freeze(QueuedAttempt.prototype)

/** What the backend is handed for `attempt`. */
export function ticketFor(attempt: Attempt): QueuedAttempt {
  return new QueuedAttempt(MADE_BY_KERNEL, attempt)
}
