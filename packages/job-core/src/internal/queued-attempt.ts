import type { BackendJob } from '../types/backend.js'
import type { Task, TaskFn } from '../types/task.js'
import { AttemptJob, startAttempt } from './attempt-job.js'
import { JOB_BINDINGS, type TaskBindings } from './bindings.js'
import type { TaskRecord } from './model.js'

let bindingsOf: (job: QueuedAttempt) => TaskBindings | undefined

/**
 * What a backend is handed for one attempt of a task: the `BackendJob`
 * protocol's members and nothing else (the task's record stays private).
 * The backend gets the same object back in `withdraw` and `release`, so it
 * may key its bookkeeping on it. Every attempt waits behind its own, so a
 * late grant of an earlier attempt can never start a later one.
 */
export class QueuedAttempt implements BackendJob {
  readonly #task: TaskRecord

  static {
    bindingsOf = (job) => job.#task.bindings
  }

  constructor(task: TaskRecord) {
    this.#task = task
  }

  get task(): Task<unknown> {
    return this.#task.handle
  }

  get priority(): number {
    return this.#task.options.priority
  }

  get taskFn(): TaskFn<unknown> {
    return this.#task.taskFn
  }

  /** The backend grants a slot: the attempt runs, or gives the slot straight back if it was withdrawn. */
  start(): void {
    const task = this.#task
    if (task.waiting !== this) {
      // Withdrawn (the task ended) after the backend picked it.
      task.core.backend.release(this)
      return
    }
    task.waiting = undefined
    const job = new AttemptJob(task, this)
    task.job = job
    startAttempt(job)
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
