import type { CancelReason, Task, TaskState } from '../types/task.js'
import { callerPromise } from './caller-promise.js'
import { cancelTask } from './cancellation.js'
import type { TaskRecord } from './model.js'
import { describeValue } from './validate.js'

let readRecord: (value: object) => TaskRecord | undefined

/** Refuses a handle made outside the kernel (`new task.constructor(…)`): `settle()` and the host trust a handle's record. */
const MADE_BY_KERNEL: unique symbol = Symbol('TaskHandle')

/**
 * What `run()` returns: the `Task` interface and nothing else. The record
 * behind it, with its pipeline and backend, is out of reach (`#task`); the
 * handle and its prototype are frozen, so no property can be added or
 * shadowed (a coordinator reading `peer.state` reads the record's).
 */
export class TaskHandle<T> implements Task<T> {
  readonly #task: TaskRecord

  static {
    readRecord = (value) => (#task in value ? (value as TaskHandle<unknown>).#task : undefined)
  }

  constructor(made: typeof MADE_BY_KERNEL, task: TaskRecord) {
    if (made !== MADE_BY_KERNEL) {
      throw new TypeError('A Task is made by run(); it has no public constructor.')
    }
    this.#task = task
    Object.freeze(this)
  }

  get id(): number {
    return this.#task.id
  }

  get label(): string | undefined {
    return this.#task.options.label
  }

  get state(): TaskState {
    return this.#task.state
  }

  get cancelReason(): CancelReason | undefined {
    const outcome = this.#task.outcome
    return outcome?.status === 'cancelled' ? outcome.reason : undefined
  }

  get cancelledBy(): number | undefined {
    const outcome = this.#task.outcome
    return outcome?.status === 'cancelled' ? cancelledByOf(outcome) : undefined
  }

  get attempt(): number {
    return this.#task.attempt
  }

  get promise(): Promise<T> {
    this.#task.observed = true
    return callerPromise(this.#task) as Promise<T>
  }

  // biome-ignore lint/suspicious/noThenProperty: a Task is a thenable by design (await run(...)).
  then<R1 = T, R2 = never>(
    onFulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onRejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.promise.then(onFulfilled, onRejected)
  }

  catch<R = never>(onRejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.promise.catch(onRejected)
  }

  finally(onFinally?: (() => void) | null): Promise<T> {
    return this.promise.finally(onFinally)
  }

  cancel(...unexpected: unknown[]): void {
    refuseCancelArguments(unexpected)
    cancelTask(this.#task, 'abort')
  }
}

Object.freeze(TaskHandle.prototype)

/** The handle of `task`, made once, right after the record. */
export function createTaskHandle(task: TaskRecord): TaskHandle<unknown> {
  return new TaskHandle(MADE_BY_KERNEL, task)
}

/**
 * `task.cancel()` takes no argument: one passed (a reason, say) would be
 * dropped silently, so it is refused and the way to give one is named.
 */
export function refuseCancelArguments(unexpected: readonly unknown[]): void {
  if (unexpected.length === 0) return
  throw new TypeError(
    `task.cancel() takes no argument, got ${describeValue(unexpected[0])}: its reason is always 'abort'. ` +
      'To say why, cancel through a signal: run(runtime, fn, { signal: controller.signal }), then controller.abort(why) gives the CancelledError that value as its cause.',
  )
}

/** The record behind a {@link TaskHandle}; `undefined` for any other value. */
export function handleRecord(value: unknown): TaskRecord | undefined {
  if (value === null || typeof value !== 'object') return undefined
  return readRecord(value)
}

function cancelledByOf(outcome: object): number | undefined {
  return (outcome as { cancelledBy?: number }).cancelledBy
}
