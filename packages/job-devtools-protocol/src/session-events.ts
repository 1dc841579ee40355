import type { WireTaskState } from './task-events.js'

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
