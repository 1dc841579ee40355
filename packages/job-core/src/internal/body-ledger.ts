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

  /** The backend granted an attempt its slot. */
  slotTaken(): void {
    this.running++
  }

  /** The body that decided its task left (its task is settled by the attempt's result). */
  deciderLeft(): void {
    this.running--
  }

  /** A body of `task` was told to stop (cancelled, timed out): it keeps its slot until it leaves. */
  stopped(task: TaskRecord): void {
    extrasOf(task).staleBodies++
  }

  /** A stopped body of `task` left or was abandoned: a retry that waited for it may now queue. */
  staleLeft(task: TaskRecord): void {
    this.running--
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
