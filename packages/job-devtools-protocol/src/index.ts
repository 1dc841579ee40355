export {
  type ConnectDevtoolsOptions,
  connectDevtools,
  type Disconnect,
  type SanitizeHook,
  type TaskPayload,
} from './bridge.js'
export { type ControlMessage, isControlMessage } from './control-message.js'
export type {
  CoordinationDroppedEvent,
  CoordinationOrphanedIntentEvent,
  CoordinationQueuedEvent,
  CoordinationRestartEvent,
  CoordinationReuseEvent,
} from './coordination-events.js'
export type {
  DevtoolsState,
  GapRecord,
  SessionState,
  TaskLinks,
  TaskTimeline,
  TimelineEntry,
} from './devtools-state.js'
export { type Envelope, type EnvelopeSource, isEnvelope } from './envelope.js'
export {
  isProtocolEvent,
  type PassthroughEvent,
  PROTOCOL_EVENT_TYPES,
  type ProtocolEvent,
  type RuntimeListenerErrorEvent,
  type RuntimeShutdownEvent,
  type WireEvent,
} from './protocol-events.js'
export { initialState, reduce, reduceAll } from './reducer.js'
export {
  type Lane,
  type LaneEnd,
  type LaneMark,
  type LaneSegment,
  lanes,
  session,
  sessionIds,
  timeline,
  timelines,
} from './selectors.js'
export type {
  Capability,
  GapReason,
  SessionGapEvent,
  SessionHelloEvent,
  SessionSnapshotEvent,
  SnapshotTask,
} from './session-events.js'
export type {
  TaskAbandonedEvent,
  TaskCreatedEvent,
  TaskExitedEvent,
  TaskRetryEvent,
  TaskTransitionEvent,
  WireCancelReason,
  WireTaskState,
} from './task-events.js'
export { type ToWireOptions, toWire } from './to-wire.js'
export type { Transport } from './transport.js'
export { createBroadcastChannelTransport } from './transports/broadcast-channel.js'
export { createInProcessTransport, type InProcessTransport } from './transports/in-process.js'
export {
  type ClosableTransport,
  createMessagePortTransport,
  listenToPort,
  type MessageEventLike,
  type MessagePortLike,
  type PortReceiver,
} from './transports/message-port.js'
export {
  createNdjsonParser,
  createNdjsonTransport,
  formatNdjson,
  type NdjsonParser,
  type NdjsonSink,
  parseNdjson,
  parseNdjsonLine,
} from './transports/ndjson.js'
export {
  createWebSocketTransport,
  type WebSocketConstructor,
  type WebSocketLike,
  type WebSocketTransportOptions,
} from './transports/websocket.js'
export { PROTOCOL_NAME, PROTOCOL_VERSION } from './version.js'
export type {
  UnserializableKind,
  WireBigInt,
  WireBinary,
  WireCircular,
  WireError,
  WireFunction,
  WireMap,
  WireObject,
  WireOpaque,
  WireSet,
  WireSymbol,
  WireTagged,
  WireTruncated,
  WireUnreadable,
  WireUnserializable,
  WireValue,
} from './wire-value.js'
