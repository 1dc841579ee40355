import type { DispatchRequest } from '../plugin.js'
import type { RunOptions, Task, TaskFn } from '../task.js'
import type { CancelReason } from '../task-state.js'
import type { TaskRecord } from './task-record.js'

/** The handle a dispatch handler gets; every method forwards to the task's state machine. */
export class DispatchRequestImpl implements DispatchRequest<unknown> {
  readonly binding: unknown
  private readonly record: TaskRecord<unknown>

  constructor(record: TaskRecord<unknown>, binding: unknown) {
    this.record = record
    this.binding = binding
  }

  get task(): Task<unknown> {
    return this.record
  }

  get taskFn(): TaskFn<unknown> {
    return this.record.taskFn
  }

  get options(): RunOptions {
    return this.record.options
  }

  get decided(): boolean {
    return this.record.decided
  }

  proceed(): Promise<unknown> {
    return this.record.proceed()
  }

  park(): void {
    this.record.park()
  }

  skip(reason: CancelReason, options?: { cancelledBy?: number; cause?: unknown }): Promise<never> {
    if (typeof reason !== 'string' || reason === '') {
      throw new TypeError(
        'request.skip(reason): reason must be a non-empty string such as "dedupe".',
      )
    }
    return this.record.skip(reason, options)
  }

  follow(peer: Task<unknown>, reason: CancelReason = 'dedupe'): Promise<unknown> {
    const record = this.record.runtime.recordOf(peer)
    if (record === this.record) {
      throw new TypeError('request.follow(peer): a task cannot follow itself; pass another task.')
    }
    this.record.cancelWith(reason, { cancelledBy: record.id })
    return record.promise
  }

  fail(error: unknown): void {
    this.record.failWith(error)
  }

  cancelPeer(peer: Task<unknown>, reason: CancelReason = 'abort'): void {
    this.record.runtime.recordOf(peer).cancelWith(reason, { cancelledBy: this.record.id })
  }
}
