import { cancelTask } from './cancellation.js'
import type { TaskRecord } from './model.js'
import { recordOf } from './record-of.js'

/**
 * `createRuntime({ maxQueued, overflow })`: `task` has just been queued for
 * its first attempt and made the queue longer than `maxQueued`. Either it is
 * cancelled (`reject-new`), or the backend's drop candidate is
 * (`drop-oldest`) — which may be `task` itself when its priority is the
 * lowest. A retry is never refused: it is not new work.
 */
export function overflowed(task: TaskRecord): void {
  const core = task.core
  if (core.control.overflow === 'reject-new') {
    cancelTask(task, 'overflow')
    return
  }
  const candidate = core.backend.dropCandidate!()
  const victim = candidate === undefined ? undefined : recordOf(candidate.task)
  if (victim === undefined || victim === task) {
    cancelTask(task, 'overflow')
    return
  }
  cancelTask(victim, 'overflow', { cancelledBy: task.id })
}
