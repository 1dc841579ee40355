import type { WireValue } from './wire-value.js'

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
