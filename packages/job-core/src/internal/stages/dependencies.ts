import { cancelTask } from '../cancellation.js'
import type { TaskCallback, TaskRecord } from '../model.js'
import { recordOf } from '../record-of.js'
import { onSettled } from '../task-callbacks.js'
import { extrasOf } from '../task-extras.js'
import type { StageResult } from './stage.js'

/**
 * `parked:dependencies` until every `dependsOn` task has succeeded; if one
 * ends otherwise, the task is cancelled with reason `dependency`.
 */
export function dependencies(task: TaskRecord): StageResult {
  const dependsOn = task.options.dependsOn
  if (dependsOn === undefined || dependsOn.length === 0) return 'next'
  const pending: TaskRecord[] = []
  for (const dependency of dependsOn) {
    if (dependency.outcome === undefined) pending.push(dependency)
    else if (dependency.outcome.status !== 'success') {
      cancelTask(task, 'dependency', { cause: dependencyFailure(dependency) })
      return 'ended'
    }
  }
  if (pending.length === 0) return 'next'
  task.moveTo('parked:dependencies')
  let waiting = pending.length
  const settled: TaskCallback = (handle) => {
    if (task.state !== 'parked:dependencies') return
    const dependency = recordOf(handle)!
    if (dependency.outcome!.status !== 'success') {
      cancelTask(task, 'dependency', { cause: dependencyFailure(dependency) })
    } else if (--waiting === 0) {
      // Every other dependency has settled already: no listener is left to remove.
      extrasOf(task).stageUndo = undefined
      task.core.resume(task, 'dependencies-met')
    }
  }
  const removers = pending.map((dependency) => onSettled(dependency, settled))
  const removeAll = () => {
    for (const remove of removers) remove()
  }
  extrasOf(task).stageUndo = removeAll
  return 'parked'
}

function dependencyFailure(dependency: TaskRecord): Error {
  const outcome = dependency.outcome!
  const how = outcome.status === 'cancelled' ? `was cancelled (${outcome.reason})` : 'failed'
  return new Error(`Dependency task #${dependency.id} ${how}.`, {
    cause: outcome.status === 'success' ? undefined : outcome.error,
  })
}
