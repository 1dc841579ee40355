export type { Backend, BackendJob } from './backend.js'
export { type Clock, systemClock, type TimerHandle } from './clock.js'
export {
  CancelledError,
  IllegalStateError,
  isCancelledError,
  isTimeoutError,
  PluginMissingError,
  TimeoutError,
  type TimeoutPhase,
} from './errors.js'
export type {
  CustomEventDraft,
  EventBus,
  EventStamp,
  RuntimeEvent,
  RuntimeEventDraft,
  RuntimeEventMap,
  RuntimeListener,
} from './events.js'
export type { DispatchHandler, DispatchRequest, Plugin, PluginHost } from './plugin.js'
export type {
  Outcome,
  RetryPolicy,
  RunOptions,
  Task,
  TaskContext,
  TaskFn,
  TimeoutOptions,
} from './task.js'
export {
  type CancelReason,
  isLegalTransition,
  isTerminalState,
  type TaskState,
  type TerminalState,
} from './task-state.js'
export { createTaskTag, readTaskTag, type TaskTag, tagTaskFn } from './task-tag.js'
