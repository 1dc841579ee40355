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
 * An exhaust coordinator dropped the intent (`cancelled`/`exhaust-dropped`)
 * because `peerId`, a call with the same key, is in flight. New in minor 2.
 *
 * @example
 * ```ts
 * const dropped: CoordinationDroppedEvent = { type: 'coordination:dropped', coordinator: 'exhaust', intentId: 2, hash: '"k"', peerId: 1 }
 * ```
 */
export interface CoordinationDroppedEvent {
  readonly type: 'coordination:dropped'
  readonly coordinator: string
  readonly intentId: number
  readonly hash: string
  /** The call in flight that made the intent drop. */
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
