import { IllegalStateError } from '../errors.js'
import type { BackendJob } from '../types/backend.js'
import type { Task, TaskFn } from '../types/task.js'
import { Attempt } from './attempt.js'
import { JOB_BINDINGS, type TaskBindings } from './bindings.js'
import { backendThrew } from './cancellation.js'
import type { TaskRecord } from './model.js'

let bindingsOf: (job: QueuedAttempt) => TaskBindings | undefined

/** Refuses a job made outside the kernel (`new job.constructor(…)`). */
const MADE_BY_KERNEL: unique symbol = Symbol('QueuedAttempt')

/**
 * What a backend is handed for one attempt of a task: the `BackendJob`
 * protocol's members and nothing else (the task stays private): no own
 * property, a frozen prototype. The kernel reads nothing from it, so what a
 * backend adds to its own job changes nothing else. The backend gets the
 * same object back in `withdraw` and `release`, so it may key its
 * bookkeeping on it. Every attempt waits behind its own, so a late grant of
 * an earlier attempt can never start a later one.
 *
 * While the attempt waits, this small object is all it is (a burst can
 * hold many waiting): its task's `waiting` points here until the task
 * leaves the queue. The first `start()` makes the attempt's owner
 * (`attempt.ts`), which takes the slot or, for a withdrawn job, hands it
 * straight back; a second `start()` is refused.
 */
export class QueuedAttempt implements BackendJob {
  readonly #task: TaskRecord
  /** Made by the first `start()`. */
  #attempt: Attempt | undefined = undefined

  static {
    bindingsOf = (job) => job.#task.bindings
  }

  constructor(made: typeof MADE_BY_KERNEL, task: TaskRecord) {
    if (made !== MADE_BY_KERNEL) {
      throw new TypeError(
        'A BackendJob is made by the runtime for its backend; it has no public constructor.',
      )
    }
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

  /**
   * The backend grants a slot: the attempt's owner takes it (`Attempt.grant`).
   * Once: a second call is refused with an `IllegalStateError` (the slot the
   * first one took is released once, when the body leaves).
   */
  start(): void {
    const task = this.#task
    const granted = this.#attempt
    if (granted !== undefined) {
      throw new IllegalStateError(
        `Backend called job.start() again for task #${task.id}${granted.number === 0 ? '' : ` (attempt ${granted.number})`}: a job starts once. ` +
          'The second call is refused; the slot the first one took is released once, with release(job), when the body leaves.',
      )
    }
    const attempt = new Attempt(task, this)
    this.#attempt = attempt
    attempt.grant()
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

/**
 * Hands a new attempt of `task` to the backend, which starts it when a slot
 * is free (inside this call when one is free now). A backend that throws
 * ends the task in `error` (the thrown value its `cause`); if it started
 * the job first, that body keeps its slot until it leaves, like any
 * stopped body.
 */
export function enqueueAttempt(task: TaskRecord): void {
  const job = new QueuedAttempt(MADE_BY_KERNEL, task)
  task.waiting = job
  try {
    task.core.backend.enqueue(job)
  } catch (error) {
    // Refused: nothing waits in the backend; a start() that comes anyway
    // finds the task no longer waiting and gives the slot back.
    if (task.waiting === job) task.waiting = undefined
    backendThrew(task, 'enqueue', error)
  }
}
