export { hashKey, type Key } from '@vega/job-core'
export { defineCoordinator, isCoordinator } from './define-coordinator.js'
export { CoordinationProtocolError, isCoordinationProtocolError } from './errors.js'
export {
  type CoordinationEvent,
  type CoordinationEventBase,
  type CoordinationEventDraft,
  type CoordinationEventMap,
  type CoordinationEventType,
  isCoordinationEvent,
} from './events.js'
export { type CoordinationInspection, inspectCoordination } from './inspect-coordination.js'
export { installCoordination } from './install-coordination.js'
export { dedupeCoordinator } from './strategies/dedupe.js'
export { exhaustCoordinator } from './strategies/exhaust.js'
export {
  createKeepLatestCoordinator,
  type KeepLatestOptions,
  keepLatestCoordinator,
} from './strategies/keep-latest.js'
export { restartCoordinator } from './strategies/restart.js'
export {
  createSerializeCoordinator,
  type SerializeCoordinator,
  type SerializeOptions,
} from './strategies/serialize.js'
export type {
  CoordinationContext,
  CoordinationIntent,
  Coordinator,
  CoordinatorImpl,
  SkipOptions,
  StatefulCoordinator,
} from './types.js'
export { withCoordinator } from './with-coordinator.js'
