import type { WireObject, WireValue } from './wire-value.js'

/**
 * A task state as sent on the wire: the kernel's `TaskState` values, open to
 * states a newer kernel adds (consumers keep an unknown state as a string).
 *
 * @example
 * ```ts
 * const state: WireTaskState = 'parked:coordinator'
 * ```
 */
export type WireTaskState =
  | 'idle'
  | 'parked:shaper'
  | 'parked:coordinator'
  | 'parked:dependencies'
  | 'queued'
  | 'running'
  | 'parked:retry'
  | 'success'
  | 'error'
  | 'cancelled'
  | (string & {})

/**
 * Why a task was cancelled, as sent on the wire: the kernel's `CancelReason`
 * values, open to reasons plugins or a newer kernel add. `overflow` is new in
 * minor 1 (`createRuntime({ maxQueued })`).
 *
 * @example
 * ```ts
 * const reason: WireCancelReason = 'overflow'
 * ```
 */
export type WireCancelReason =
  | 'abort'
  | 'dedupe'
  | 'exhaust-dropped'
  | 'orphaned-intent'
  | 'superseded'
  | 'dependency'
  | 'parent'
  | 'shutdown'
  | 'overflow'
  | (string & {})

/**
 * What a producer supports, listed in `session:hello`.
 *
 * - `request-snapshot`: it answers a `{ type: 'request-snapshot' }` control message.
 * - `task-values`: a `sanitize` hook opted in, so task inputs/results may be sent.
 * - `stacks`: error stacks are included.
 *
 * @example
 * ```ts
 * const canResync = hello.capabilities.includes('request-snapshot' satisfies Capability)
 * ```
 */
export type Capability = 'request-snapshot' | 'task-values' | 'stacks' | (string & {})

/**
 * The first message of every connection. `minor` is the producer's
 * `PROTOCOL_VERSION.minor`; the major is the envelope's `v`.
 *
 * @example
 * ```ts
 * const hello: SessionHelloEvent = { type: 'session:hello', minor: 0, capabilities: ['request-snapshot'] }
 * ```
 */
export interface SessionHelloEvent {
  readonly type: 'session:hello'
  /** The producer's minor protocol version. */
  readonly minor: number
  /** What the producer supports. */
  readonly capabilities: readonly Capability[]
}

/**
 * One non-terminal task in a `session:snapshot`.
 *
 * @example
 * ```ts
 * const task: SnapshotTask = { id: 3, label: 'save', state: 'running', key: '["doc",1]', attempt: 1, since: 1200 }
 * ```
 */
export interface SnapshotTask {
  /** The task id, unique within the runtime. */
  readonly id: number
  readonly label?: string
  readonly state: WireTaskState
  /** The key hash, when a binding gave the task one. */
  readonly key?: string
  /** The task that started this one with `ctx.run`. */
  readonly parentId?: number
  /** The current attempt, 1-based; 0 before the first start. */
  readonly attempt: number
  /** When the task entered `state`, in the producer's clock ms. */
  readonly since: number
}

/**
 * The live (non-terminal) tasks, built from the runtime rather than by
 * replaying history. Everything up to and including `upToSeq` is reflected.
 * A consumer that missed envelopes resynchronises on it.
 *
 * @example
 * ```ts
 * const snapshot: SessionSnapshotEvent = { type: 'session:snapshot', upToSeq: 1, tasks: [] }
 * ```
 */
export interface SessionSnapshotEvent {
  readonly type: 'session:snapshot'
  /** The last seq whose effect the snapshot includes. */
  readonly upToSeq: number
  /** The non-terminal tasks, in creation order. */
  readonly tasks: readonly SnapshotTask[]
}

/**
 * Why envelopes were lost.
 *
 * - `overflow`: the producer's ring buffer was full and dropped the oldest.
 * - `reconnect`: a transport lost its channel and opened a new one.
 * - `transport-error`: `transport.send` threw and the batch was lost.
 *
 * @example
 * ```ts
 * const reason: GapReason = 'overflow'
 * ```
 */
export type GapReason = 'overflow' | 'reconnect' | 'transport-error' | (string & {})

/**
 * Envelopes `fromSeq`…`toSeq` (inclusive) were lost. The gap envelope itself
 * carries `seq === toSeq`: it stands in the place of the last lost envelope,
 * so the sequence stays strictly increasing. The consumer's view is stale
 * until the next `session:snapshot`.
 *
 * @example
 * ```ts
 * const gap: SessionGapEvent = { type: 'session:gap', fromSeq: 4, toSeq: 9, reason: 'overflow' }
 * ```
 */
export interface SessionGapEvent {
  readonly type: 'session:gap'
  readonly fromSeq: number
  readonly toSeq: number
  readonly reason: GapReason
}

/**
 * A task was created (`idle`).
 *
 * @example
 * ```ts
 * const created: TaskCreatedEvent = { type: 'task:created', taskId: 1, label: 'search', key: '"q"' }
 * ```
 */
export interface TaskCreatedEvent {
  readonly type: 'task:created'
  readonly taskId: number
  readonly label?: string
  /** The task that ran this one with `ctx.run`. */
  readonly parentId?: number
  /** The key hash, when a binding (coordinator, shaper) gave the task one. */
  readonly key?: string
}

/**
 * Every state change of a task, one generic event: a new state is a minor
 * change and reducers stay generic.
 *
 * @example
 * ```ts
 * const t: TaskTransitionEvent = { type: 'task:transition', taskId: 1, from: 'running', to: 'cancelled', reason: 'abort', cancelledBy: 2, attempt: 1 }
 * ```
 */
export interface TaskTransitionEvent {
  readonly type: 'task:transition'
  readonly taskId: number
  readonly from: WireTaskState
  readonly to: WireTaskState
  /** The cancel reason, when `to` is `cancelled`. */
  readonly reason?: WireCancelReason
  /** The task whose coordination or shaping caused this cancellation. */
  readonly cancelledBy?: number
  /** The encoded error, when `to` is `error` (or the cancellation has one). */
  readonly error?: WireValue
  readonly attempt: number
  /** The encoded result, only when a `sanitize` hook opted in. */
  readonly value?: WireValue
}

/**
 * An attempt failed and another follows after `delay` ms.
 *
 * @example
 * ```ts
 * const retry: TaskRetryEvent = { type: 'task:retry', taskId: 1, attempt: 1, delay: 100, error: { __type: 'Error', name: 'Error', message: 'flaky' } }
 * ```
 */
export interface TaskRetryEvent {
  readonly type: 'task:retry'
  readonly taskId: number
  /** The attempt that failed. */
  readonly attempt: number
  readonly delay: number
  readonly error: WireValue
}

/**
 * A cancelled task's body finally returned (or threw): its concurrency slot
 * is free now.
 *
 * @example
 * ```ts
 * const exited: TaskExitedEvent = { type: 'task:exited', taskId: 1, threw: { __type: 'Error', name: 'AbortError', message: 'aborted' } }
 * ```
 */
export interface TaskExitedEvent {
  readonly type: 'task:exited'
  readonly taskId: number
  /** What the body threw on its way out, encoded. */
  readonly threw?: WireValue
  /** Minor 1: `abandonAfter` had already released the body's slot (see {@link TaskAbandonedEvent}). */
  readonly abandoned?: true
}

/**
 * Minor 1. A cancelled or timed-out body ignored its signal for
 * `abandonAfter` ms: the runtime released its slot without it. Its eventual
 * exit is a `task:exited` with `abandoned: true`.
 *
 * @example
 * ```ts
 * const abandoned: TaskAbandonedEvent = { type: 'task:abandoned', taskId: 1 }
 * ```
 */
export interface TaskAbandonedEvent {
  readonly type: 'task:abandoned'
  readonly taskId: number
}

/**
 * A coordinator merged an intent into a running peer: the intent is
 * `cancelled`/`dedupe` and its caller receives the peer's promise.
 *
 * @example
 * ```ts
 * const reuse: CoordinationReuseEvent = { type: 'coordination:reuse', coordinator: 'dedupe', intentId: 2, hash: '"k"', peerId: 1 }
 * ```
 */
export interface CoordinationReuseEvent {
  readonly type: 'coordination:reuse'
  /** The coordinator's name. */
  readonly coordinator: string
  readonly intentId: number
  readonly hash: string
  /** The task whose promise the intent's caller receives. */
  readonly peerId: number
}

/**
 * A restart coordinator cancelled the intent's peers before proceeding.
 *
 * @example
 * ```ts
 * const restart: CoordinationRestartEvent = { type: 'coordination:restart', coordinator: 'restart', intentId: 2, hash: '"k"', cancelledPeerIds: [1] }
 * ```
 */
export interface CoordinationRestartEvent {
  readonly type: 'coordination:restart'
  readonly coordinator: string
  readonly intentId: number
  readonly hash: string
  readonly cancelledPeerIds: readonly number[]
}

/**
 * A serialize coordinator parked the intent behind `position` waiters.
 *
 * @example
 * ```ts
 * const queued: CoordinationQueuedEvent = { type: 'coordination:queued', coordinator: 'serialize', intentId: 3, hash: '"k"', position: 1 }
 * ```
 */
export interface CoordinationQueuedEvent {
  readonly type: 'coordination:queued'
  readonly coordinator: string
  readonly intentId: number
  readonly hash: string
  /** How many calls with the same key are ahead of this one. */
  readonly position: number
}

/**
 * The coordinator decided nothing; the kernel skipped the intent
 * (`cancelled`/`orphaned-intent`).
 *
 * @example
 * ```ts
 * const orphan: CoordinationOrphanedIntentEvent = { type: 'coordination:orphaned-intent', coordinator: 'forgetful', intentId: 1, hash: '"k"' }
 * ```
 */
export interface CoordinationOrphanedIntentEvent {
  readonly type: 'coordination:orphaned-intent'
  readonly coordinator: string
  readonly intentId: number
  readonly hash: string
}

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
  | CoordinationReuseEvent
  | CoordinationRestartEvent
  | CoordinationQueuedEvent
  | CoordinationOrphanedIntentEvent
  | RuntimeShutdownEvent
  | RuntimeListenerErrorEvent
  | TaskAbandonedEvent

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
