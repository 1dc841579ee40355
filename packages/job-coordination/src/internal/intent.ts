import type { CancelReason, Task, TaskState } from '@vega/job-core'
import type { CoordinationIntent, SkipOptions } from '../types.js'

/**
 * The intent as its coordinator sees it: the task, plus park, skip and fail.
 * Its moves are closures over the context, not a reference to it, so the
 * intent leads nowhere further either.
 */
export class Intent implements CoordinationIntent {
  readonly #task: Task<unknown>
  readonly #skip: (reason: CancelReason, options?: SkipOptions) => Promise<never>
  readonly #park: () => void
  readonly #fail: (error: unknown) => void

  constructor(
    task: Task<unknown>,
    skip: (reason: CancelReason, options?: SkipOptions) => Promise<never>,
    park: () => void,
    fail: (error: unknown) => void,
  ) {
    this.#task = task
    this.#skip = skip
    this.#park = park
    this.#fail = fail
    Object.freeze(this)
  }

  get id(): number {
    return this.#task.id
  }

  get label(): string | undefined {
    return this.#task.label
  }

  get state(): TaskState {
    return this.#task.state
  }

  get cancelReason(): CancelReason | undefined {
    return this.#task.cancelReason
  }

  get cancelledBy(): number | undefined {
    return this.#task.cancelledBy
  }

  get attempt(): number {
    return this.#task.attempt
  }

  get promise(): Promise<unknown> {
    return this.#task.promise
  }

  cancel(): void {
    this.#task.cancel()
  }

  // biome-ignore lint/suspicious/noThenProperty: an intent is a Task, and tasks are thenables.
  then<R1 = unknown, R2 = never>(
    onFulfilled?: ((value: unknown) => R1 | PromiseLike<R1>) | null,
    onRejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#task.promise.then(onFulfilled, onRejected)
  }

  catch<R = never>(
    onRejected?: ((reason: unknown) => R | PromiseLike<R>) | null,
  ): Promise<unknown> {
    return this.#task.promise.catch(onRejected)
  }

  finally(onFinally?: (() => void) | null): Promise<unknown> {
    return this.#task.promise.finally(onFinally)
  }

  parkCoordinator(): void {
    this.#park()
  }

  skip(reason: CancelReason, options?: SkipOptions): Promise<never> {
    return this.#skip(reason, options)
  }

  fail(error: unknown): void {
    this.#fail(error)
  }
}
