import { PluginMissingError } from '../../errors.js'
import { substitute } from '../caller-promise.js'
import { failTask } from '../cancellation.js'
import { CORE_TAG_OWNER } from '../core-tag-owner.js'
import { DispatchRequestImpl } from '../dispatch-request.js'
import type { Claim, TaskRecord } from '../model.js'
import { handled } from '../promises.js'
import type { StageResult } from './stage.js'

/**
 * The dispatch seam: a taskFn tagged by a plugin is decided by the plugin
 * that claimed the tag (the outermost binding with a handler decides; the
 * others only route). A tag nobody claimed hits the loud-fail guard: the
 * task ends in `error` with a `PluginMissingError` naming the plugin.
 */
export function dispatch(task: TaskRecord): StageResult {
  const layers = task.bindings
  if (layers === undefined) return 'next'
  let deciding: Claim | undefined
  let binding: unknown
  let missing: string | undefined
  // Outermost first: the first handler found decides; a missing plugin fails
  // the task whichever layer it sits in (the innermost is named).
  for (let layer: typeof layers | undefined = layers; layer !== undefined; layer = layer.inner) {
    const claim = task.core.claims.get(layer.tag)
    if (claim === undefined) {
      if (layer.tag.plugin !== CORE_TAG_OWNER) missing = layer.tag.plugin
    } else if (claim.handler !== undefined && deciding === undefined) {
      deciding = claim
      binding = layer.binding
    }
  }
  if (missing !== undefined) {
    failTask(task, new PluginMissingError(missing, task.id))
    return 'ended'
  }
  if (deciding === undefined) return 'next'
  // Before the handler runs: a task it ends at once is told to the hooks too.
  if (deciding.onSettled !== undefined || deciding.onExited !== undefined) {
    task.decidedBy = deciding
  }
  const request = new DispatchRequestImpl(task, binding)
  let answer: unknown
  try {
    answer = deciding.handler!(request)
  } catch (error) {
    if (!request.decided) failTask(task, error)
    substitute(task, handled(Promise.reject(error)), true)
    return task.outcome === undefined ? 'parked' : 'ended'
  }
  substitute(task, answer, answer !== undefined && answer === request.followed)
  return task.outcome === undefined ? 'parked' : 'ended'
}
