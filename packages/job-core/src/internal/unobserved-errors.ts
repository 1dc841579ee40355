import type { Task } from '../types/task.js'
import type { RuntimeCore, TaskRecord } from './model.js'
import { nextMacrotask } from './promises.js'

/**
 * A task ended in `error`: unless somebody observes it before the next
 * macrotask (awaits it, reads `task.promise`, calls `settle`), the runtime's
 * `onUnobservedError` hears of it, once. A fire-and-forget failure is never
 * silent, and a failure someone handles is never reported.
 */
export function watchUnobserved(task: TaskRecord): void {
  const core = task.core
  if (task.observed || core.control.onUnobservedError === undefined) return
  const pending = core.unobserved
  if (pending !== undefined) {
    pending.push(task)
    return
  }
  core.unobserved = [task]
  // One macrotask check for every task that failed in this one.
  void nextMacrotask().then(() => reportUnobserved(core))
}

function reportUnobserved(core: RuntimeCore): void {
  const tasks = core.unobserved ?? []
  core.unobserved = undefined
  const report = core.control.onUnobservedError!
  for (const task of tasks) {
    if (task.observed) continue
    // Once per task: observing it later changes nothing.
    task.observed = true
    const outcome = task.outcome
    const error = outcome?.status === 'error' ? outcome.error : undefined
    try {
      report(error, task.handle)
    } catch (handlerError) {
      console.error(
        `[@vega/job-core] createRuntime({ onUnobservedError }) threw while reporting task #${task.id}; its error and the handler's follow.`,
        error,
        handlerError,
      )
    }
  }
}

/** The default `onUnobservedError`: one `console.error` per task, with its id, label and runtime. */
export function reportUnobservedToConsole(error: unknown, task: Task<unknown>): void {
  const label = task.label === undefined ? '' : ` "${task.label}"`
  console.error(
    `[@vega/job-core] task #${task.id}${label} failed and nobody observed it: await it, add .catch(), or use settle(task). ` +
      'Pass createRuntime({ onUnobservedError }) to route these reports, or false to turn them off.',
    error,
  )
}
