import { IllegalStateError } from '../errors.js'
import type { DispatchRequest } from '../types/plugin.js'
import type { CancelReason, RunOptions, Task, TaskFn } from '../types/task.js'
import { ownPromise } from './caller-promise.js'
import { type CancelOptions, cancelTask, cancelTaskBy, failTask } from './cancellation.js'
import type { TaskRecord } from './model.js'
import { recordOf } from './record-of.js'
import { DISPATCH } from './stages/stage.js'

/** The handle a dispatch handler gets: the decisions it may take on one task. */
export class DispatchRequestImpl implements DispatchRequest<unknown> {
  readonly binding: unknown
  readonly #task: TaskRecord
  /** The caller promise `follow` returned: already guarded against unhandled rejection. */
  followed: Promise<unknown> | undefined = undefined

  constructor(task: TaskRecord, binding: unknown) {
    this.#task = task
    this.binding = binding
  }

  get task(): Task<unknown> {
    return this.#task.handle
  }

  get taskFn(): TaskFn<unknown> {
    return this.#task.taskFn
  }

  get options(): RunOptions {
    return this.#task.options.given
  }

  get decided(): boolean {
    return this.#task.stage > DISPATCH || this.#task.outcome !== undefined
  }

  proceed(): Promise<unknown> {
    const task = this.#task
    if (task.outcome !== undefined) return ownPromise(task)
    if (task.stage !== DISPATCH) {
      throw new IllegalStateError(
        `Task #${task.id} was already dispatched (state ${task.state}); decide each task once.`,
      )
    }
    task.core.resume(task, 'proceeded')
    return ownPromise(task)
  }

  park(): void {
    const task = this.#task
    if (task.state !== 'idle' || task.stage !== DISPATCH) {
      throw new IllegalStateError(
        `Task #${task.id} can only be parked while idle (it is ${task.state}).`,
      )
    }
    task.moveTo('parked:coordinator')
  }

  get result(): Promise<unknown> {
    return ownPromise(this.#task)
  }

  skip(reason: CancelReason, options?: CancelOptions): Promise<never> {
    if (typeof reason !== 'string' || reason === '') {
      throw new TypeError(
        'request.skip(reason): reason must be a non-empty string such as "dedupe".',
      )
    }
    const task = this.#task
    cancelTask(task, reason, options)
    return ownPromise(task) as Promise<never>
  }

  follow(peer: Task<unknown>, reason: CancelReason = 'dedupe'): Promise<unknown> {
    const record = this.#peer(peer, 'request.follow(peer)')
    if (record === this.#task) {
      throw new TypeError('request.follow(peer): a task cannot follow itself; pass another task.')
    }
    cancelTaskBy(this.#task, reason, record.id)
    this.followed = peer.promise
    return this.followed
  }

  fail(error: unknown): void {
    failTask(this.#task, error)
  }

  cancelPeer(peer: Task<unknown>, reason: CancelReason = 'abort'): void {
    cancelTask(this.#peer(peer, 'request.cancelPeer(peer)'), reason, {
      cancelledBy: this.#task.id,
    })
  }

  #peer(peer: Task<unknown>, where: string): TaskRecord {
    const record = recordOf(peer)
    if (record === undefined || record.core !== this.#task.core) {
      throw new TypeError(`${where}: expected a task created by run() on this runtime.`)
    }
    return record
  }
}
