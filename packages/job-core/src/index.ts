export { assertKnownKeys } from './assert-known-keys.js'
export { cancelAll } from './cancel-all.js'
export { cancelQueued } from './cancel-queued.js'
export { systemClock } from './clock.js'
export { counts } from './counts.js'
export { debounce } from './debounce.js'
export {
  CancelledError,
  IllegalStateError,
  isCancelledError,
  isTimeoutError,
  PluginMissingError,
  TimeoutError,
} from './errors.js'

export { hashKey } from './hash-key.js'
export { inspect } from './inspect.js'
export { isPaused, pause, resume } from './pause.js'
export { createPriorityBackend } from './priority-backend.js'
export { run } from './run.js'
export { createRuntime } from './runtime.js'
export { getRuntimeInspector, RUNTIME_INSPECTOR_KEY } from './runtime-inspector.js'
export { setConcurrency } from './set-concurrency.js'
export { settle } from './settle.js'
export { shareReadings } from './share-readings.js'
export { shutdown } from './shutdown.js'
export { getEventBus, subscribe } from './subscribe.js'
export { isLegalTransition, isTerminalState } from './task-state.js'
export { createTaskTag, readTaskTag, tagTaskFn } from './task-tag.js'
export { createTestClock } from './test-clock.js'
export { throttle } from './throttle.js'
export type {
  Backend,
  BackendJob,
  Clock,
  PriorityBackendOptions,
  StartGate,
  TestClock,
  TimerHandle,
} from './types/backend.js'
export type {
  CustomEventDraft,
  EventBus,
  EventStamp,
  RuntimeEvent,
  RuntimeEventDraft,
  RuntimeEventMap,
  RuntimeListener,
  TaskTransitionEvent,
} from './types/events.js'
export type {
  RuntimeCounts,
  RuntimeInspection,
  RuntimeInspector,
  TaskSnapshot,
} from './types/inspection.js'
export type { Outcome } from './types/outcome.js'
export type {
  AttemptInfo,
  AttemptWrapper,
  ClaimOptions,
  DispatchHandler,
  DispatchRequest,
  Plugin,
  PluginHost,
  TaskTag,
} from './types/plugin.js'
export type {
  OverflowPolicy,
  RateLimitOptions,
  RunDefaults,
  RuntimeOptions,
  ShutdownOptions,
  ShutdownReport,
  UnobservedErrorHandler,
} from './types/runtime.js'
export type {
  DebounceOptions,
  DebounceShaper,
  Shaper,
  ThrottleOptions,
  ThrottleShaper,
} from './types/shaper.js'
export type {
  CancelReason,
  Key,
  RetryPolicy,
  RunOptions,
  Runtime,
  ShutdownMode,
  Task,
  TaskContext,
  TaskFn,
  TaskState,
  TerminalState,
  TimeoutOptions,
  TimeoutPhase,
} from './types/task.js'

export { VERSION } from './version.js'
export { watch } from './watch.js'
export { whenIdle } from './when-idle.js'
export { whenQueueBelow } from './when-queue-below.js'
export { withShaper } from './with-shaper.js'
export { wrapAttempts } from './wrap-attempts.js'
