export { createJobPlugin, provideRuntime, useRuntime } from './job-plugin.js'
export type { TaskStateSnapshot } from './task-state-snapshot.js'
export { useCounts } from './use-counts.js'
export {
  type CustomRuntimeEvent,
  type RuntimeEventOf,
  useRuntimeEvent,
} from './use-runtime-event.js'
export { type TaskBody, type UseTaskOptions, type UseTaskReturn, useTask } from './use-task.js'
export { useTaskState } from './use-task-state.js'
