import { phaseOf, queuedOf, setPhase, setTimer } from './attempt-job.js'
import type { AttemptJob, TaskRecord } from './model.js'
import { staleBodyLeft } from './retry.js'
import { bodyLeft } from './stages/settle.js'

/**
 * `createRuntime({ abandonAfter })`: the body of `job` was told to stop (its
 * task ended, or its attempt timed out). If it has not left `abandonAfter`
 * ms later, its slot is released anyway (`task:abandoned`). Uses the job's
 * timer, which its exit clears.
 */
export function armAbandon(task: TaskRecord, job: AttemptJob): void {
  const ms = task.core.control.abandonAfter
  if (ms === Number.POSITIVE_INFINITY || phaseOf(job) !== 'started') return
  setTimer(
    job,
    task.core.clock.setTimeout(() => {
      setTimer(job, undefined)
      abandonBody(task, job)
    }, ms),
  )
}

function abandonBody(task: TaskRecord, job: AttemptJob): void {
  if (phaseOf(job) !== 'started') return
  setPhase(job, 'abandoned')
  const core = task.core
  // Released like a body that left: a retry that waited for it may go.
  staleBodyLeft(task)
  core.runningBodies--
  if (task.outcome !== undefined) core.exitingBodies--
  core.shutdown?.bodyAbandoned()
  if (core.bus.active) core.bus.emit({ type: 'task:abandoned', taskId: task.id })
  bodyLeft(task)
  core.backend.release(queuedOf(job))
  core.checkIdle()
}

/** An abandoned body finally left: reported, with nothing left to release. */
export function abandonedBodyExited(task: TaskRecord, value: unknown, threw: boolean): void {
  const bus = task.core.bus
  if (!bus.active) return
  bus.emit(
    threw
      ? { type: 'task:exited', taskId: task.id, threw: value, abandoned: true }
      : { type: 'task:exited', taskId: task.id, abandoned: true },
  )
}
