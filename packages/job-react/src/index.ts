export { JobProvider, type JobProviderProps } from './job-provider.js'
export type { TaskStateSnapshot } from './task-state-snapshot.js'
export { useCounts } from './use-counts.js'
export { useRuntime } from './use-runtime.js'
export {
  type CustomRuntimeEvent,
  type RuntimeEventOf,
  useRuntimeEvent,
} from './use-runtime-event.js'
export { type TaskBody, type UseTaskHandle, type UseTaskOptions, useTask } from './use-task.js'
export { useTaskState } from './use-task-state.js'
