import type { RuntimeInspection, TaskSnapshot } from '../types/inspection.js'
import type { RuntimeCore } from './model.js'

/** The snapshot behind `inspect(runtime)` and the runtime inspector. */
export function inspectCore(core: RuntimeCore): RuntimeInspection {
  const tasks: TaskSnapshot[] = []
  for (const task of core.live.values()) {
    tasks.push({
      id: task.id,
      label: task.options.label,
      state: task.state,
      key: task.key,
      attempt: task.attempt,
      parentId: task.parentId,
      since: task.since,
    })
  }
  let shaperWindows = 0
  for (const windows of core.shaperWindows.values()) shaperWindows += windows.size
  return {
    name: core.name,
    closed: core.shutdown !== undefined,
    tasks,
    sizes: {
      liveTasks: core.live.size,
      queued: core.backend.queued,
      slotsInUse: core.backend.running,
      runningBodies: core.bodies.running,
      shaperWindows,
      listeners: core.bus.listenerCount,
      attemptWrappers: core.attemptWrappers?.length ?? 0,
    },
    lastSeq: core.bus.lastSeq,
  }
}
