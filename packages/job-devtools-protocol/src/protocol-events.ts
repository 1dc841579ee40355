import type {
  CoordinationDroppedEvent,
  CoordinationOrphanedIntentEvent,
  CoordinationQueuedEvent,
  CoordinationRestartEvent,
  CoordinationReuseEvent,
} from './coordination-events.js'
import type { SessionGapEvent, SessionHelloEvent, SessionSnapshotEvent } from './session-events.js'
import type {
  TaskAbandonedEvent,
  TaskCreatedEvent,
  TaskExitedEvent,
  TaskRetryEvent,
  TaskTransitionEvent,
} from './task-events.js'
import type { WireObject, WireValue } from './wire-value.js'

/**
 * The runtime's shutdown progressed.
 *
 * @example
 * ```ts
 * const shutdown: RuntimeShutdownEvent = { type: 'runtime:shutdown', phase: 'started' }
 * ```
 */
export interface RuntimeShutdownEvent {
  readonly type: 'runtime:shutdown'
  readonly phase: 'started' | 'escalated' | 'finished' | (string & {})
}

/**
 * A runtime listener threw; the runtime went on.
 *
 * @example
 * ```ts
 * const e: RuntimeListenerErrorEvent = { type: 'runtime:listener-error', error: { __type: 'Error', name: 'Error', message: 'boom' }, eventType: 'task:created', eventSeq: 4 }
 * ```
 */
export interface RuntimeListenerErrorEvent {
  readonly type: 'runtime:listener-error'
  readonly error: WireValue
  readonly eventType: string
  readonly eventSeq: number
}

/**
 * Every event this version of the protocol defines, discriminated by `type`.
 *
 * @example
 * ```ts
 * function describe(e: ProtocolEvent): string {
 *   switch (e.type) {
 *     case 'task:transition':
 *       return `#${e.taskId} ${e.from} → ${e.to}`
 *     default:
 *       return e.type
 *   }
 * }
 * ```
 */
export type ProtocolEvent =
  | SessionHelloEvent
  | SessionSnapshotEvent
  | SessionGapEvent
  | TaskCreatedEvent
  | TaskTransitionEvent
  | TaskRetryEvent
  | TaskExitedEvent
  | TaskAbandonedEvent
  | CoordinationReuseEvent
  | CoordinationDroppedEvent
  | CoordinationRestartEvent
  | CoordinationQueuedEvent
  | CoordinationOrphanedIntentEvent
  | RuntimeShutdownEvent
  | RuntimeListenerErrorEvent

/**
 * Any other runtime event (a plugin's or a user's custom diagnostic), passed
 * through with its `type` and its fields encoded by `toWire`.
 *
 * @example
 * ```ts
 * const custom: PassthroughEvent = { type: 'cache:hit', fields: { key: 'user:1' } }
 * ```
 */
export interface PassthroughEvent {
  readonly type: string
  readonly fields: WireObject
}

/**
 * What an envelope's `e` may hold: a {@link ProtocolEvent} or, for a type
 * this version does not define, a {@link PassthroughEvent}. Narrow with
 * {@link isProtocolEvent} before switching on `type`.
 *
 * @example
 * ```ts
 * const e: WireEvent = { type: 'cache:hit', fields: {} }
 * ```
 */
export type WireEvent = ProtocolEvent | PassthroughEvent

/**
 * The `type` of every {@link ProtocolEvent}, in a stable order.
 *
 * @example
 * ```ts
 * PROTOCOL_EVENT_TYPES.includes('task:retry') // true
 * ```
 */
export const PROTOCOL_EVENT_TYPES: readonly ProtocolEvent['type'][] = Object.freeze([
  'session:hello',
  'session:snapshot',
  'session:gap',
  'task:created',
  'task:transition',
  'task:retry',
  'task:exited',
  'task:abandoned',
  'coordination:reuse',
  'coordination:dropped',
  'coordination:restart',
  'coordination:queued',
  'coordination:orphaned-intent',
  'runtime:shutdown',
  'runtime:listener-error',
] satisfies ProtocolEvent['type'][])

const KNOWN: ReadonlySet<string> = new Set(PROTOCOL_EVENT_TYPES)

/**
 * Whether `event` has a `type` this version of the protocol defines. It
 * checks the `type` only; fields are trusted as the schema describes them.
 *
 * @example
 * ```ts
 * if (isProtocolEvent(envelope.e) && envelope.e.type === 'task:created') console.log(envelope.e.label)
 * ```
 */
export function isProtocolEvent(event: { readonly type: string }): event is ProtocolEvent {
  return KNOWN.has(event.type)
}
