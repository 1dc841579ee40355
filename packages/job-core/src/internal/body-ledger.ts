import type { TaskRecord } from './model.js'
import { extrasOf } from './task-extras.js'

/**
 * The runtime's body counters (`counts().running`, `counts().exiting`) and
 * each task's stopped bodies: written here only, and told only by an
 * attempt (`attempt.ts`) as its body takes, keeps or leaves a slot, and by
 * the task's ending (`taskEnded`). `running` is the honest slot count:
 * a cancelled body that has not left still holds its slot.
 */
export class BodyLedger {
  /** Bodies holding a slot: started, and not yet left or abandoned (cancelled ones included). */
  running = 0
  /** The part of `running` whose task has already ended. */
  exiting = 0
  /**
   * Bodies counted out of `running` whose slot the backend has not had back
   * yet: a body stops counting before what its leaving causes is told (so
   * a listener reads true counts), and the runtime is idle only once its
   * slot is back.
   */
  releasing = 0

  /** No body holds a slot, and every slot is back with the backend. */
  get holdNoSlot(): boolean {
    return this.running === 0 && this.releasing === 0
  }

  /** The backend granted an attempt its slot. */
  slotTaken(): void {
    this.running++
  }

  /** The body that decided its task left, before its result settles the task; its slot goes back next. */
  deciderLeft(): void {
    this.running--
    this.releasing++
  }

  /** The backend has the slot of a body counted out by `deciderLeft` or `staleLeft` back. */
  slotReleased(): void {
    this.releasing--
  }

  /** A body of `task` was told to stop (cancelled, timed out): it keeps its slot until it leaves. */
  stopped(task: TaskRecord): void {
    extrasOf(task).staleBodies++
  }

  /**
   * A stopped body of `task` left or was abandoned (its slot goes back
   * next): a retry that waited for it may now queue.
   */
  staleLeft(task: TaskRecord): void {
    this.running--
    this.releasing++
    if (task.outcome !== undefined) this.exiting--
    const extras = task.extras!
    if (--extras.staleBodies === 0 && extras.retryAfterStale !== undefined) {
      const retry = extras.retryAfterStale
      extras.retryAfterStale = undefined
      retry()
    }
  }

  /** `task` reached its terminal state: its stopped bodies still inside now count as exiting. */
  taskEnded(task: TaskRecord): void {
    const extras = task.extras
    if (extras === undefined) return
    this.exiting += extras.staleBodies
    extras.retryAfterStale = undefined
  }

  /**
   * Runs `retry` now, or once the task's stopped bodies have all left: two
   * attempts of one task never overlap.
   */
  whenNoStaleBody(task: TaskRecord, retry: () => void): void {
    const extras = extrasOf(task)
    if (extras.staleBodies > 0) extras.retryAfterStale = retry
    else retry()
  }
}
