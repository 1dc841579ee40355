export { assertKnownKeys } from './assert-known-keys.js'
export type { Backend, BackendJob, StartGate } from './backend.js'
export { cancelAll } from './cancel-all.js'
export { cancelQueued } from './cancel-queued.js'
export { type Clock, systemClock, type TimerHandle } from './clock.js'
export type {
  OverflowPolicy,
  RateLimitOptions,
  RunDefaults,
  UnobservedErrorHandler,
} from './control-options.js'
export { counts, type RuntimeCounts } from './counts.js'
export { type DebounceOptions, debounce } from './debounce.js'
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
export { hashKey, type Key } from './hash-key.js'
export { inspect, type RuntimeInspection, type TaskSnapshot } from './inspect.js'
export { isPaused, pause, resume } from './pause.js'
export type {
  ClaimOptions,
  DispatchHandler,
  DispatchRequest,
  Plugin,
  PluginHost,
} from './plugin.js'
export { createPriorityBackend, type PriorityBackendOptions } from './priority-backend.js'
export { run } from './run.js'
export { createRuntime, type Runtime, type RuntimeOptions } from './runtime.js'
export {
  getRuntimeInspector,
  RUNTIME_INSPECTOR_KEY,
  type RuntimeInspector,
} from './runtime-inspector.js'
export { setConcurrency } from './set-concurrency.js'
export { settle } from './settle.js'
export type { DebounceShaper, Shaper, ThrottleShaper } from './shaper.js'
export {
  type ShutdownMode,
  type ShutdownOptions,
  type ShutdownReport,
  shutdown,
} from './shutdown.js'
export { getEventBus, subscribe } from './subscribe.js'
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
export { createTestClock, type TestClock } from './test-clock.js'
export { type ThrottleOptions, throttle } from './throttle.js'
export { VERSION } from './version.js'
export { whenIdle } from './when-idle.js'
export { whenQueueBelow } from './when-queue-below.js'
export { withShaper } from './with-shaper.js'
export { type AttemptInfo, type AttemptWrapper, wrapAttempts } from './wrap-attempts.js'
