import type { RunOptions, Task, TaskContext, TaskFn } from '../task.js'
import type { TaskRecord } from './task-record.js'
import { validateMs } from './validate.js'

/** The `ctx` a body receives; one per attempt. */
export class TaskContextImpl implements TaskContext {
  readonly taskId: number
  readonly attempt: number
  readonly #task: TaskRecord
  // Created on first use: most bodies never read their signal.
  #controller: AbortController | undefined = undefined
  #abortedWith: { readonly reason: unknown } | undefined = undefined

  constructor(task: TaskRecord, attempt: number) {
    this.#task = task
    this.taskId = task.id
    this.attempt = attempt
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController()
      if (this.#abortedWith !== undefined) this.#controller.abort(this.#abortedWith.reason)
    }
    return this.#controller.signal
  }

  /** Aborts the signal with `reason` (a `CancelledError` or `TimeoutError`). Once. */
  abort(reason: unknown): void {
    if (this.#abortedWith !== undefined) return
    this.#abortedWith = { reason }
    this.#controller?.abort(reason)
  }

  sleep(ms: number): Promise<void> {
    validateMs(ms, 'ctx.sleep(ms)')
    const signal = this.signal
    if (signal.aborted) return Promise.reject(abortError(signal.reason))
    const clock = this.#task.core.clock
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        clock.clearTimeout(timer)
        reject(abortError(signal.reason))
      }
      const timer = clock.setTimeout(() => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      }, ms)
      signal.addEventListener('abort', onAbort, { once: true })
    })
  }

  run<U>(taskFn: TaskFn<U>, options?: RunOptions): Task<U> {
    if (typeof taskFn !== 'function') {
      throw new TypeError(`ctx.run(taskFn): taskFn must be a function, got ${typeof taskFn}.`)
    }
    const task = this.#task
    return task.core.runTask(taskFn, options, 'ctx.run', task)
  }
}

function abortError(reason: unknown): Error {
  const error = new DOMException('The operation was aborted.', 'AbortError')
  Object.defineProperty(error, 'cause', { value: reason, configurable: true, writable: true })
  return error
}
