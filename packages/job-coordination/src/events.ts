import type { RuntimeEvent } from '@vega/job-core'

/**
 * Fields every coordination diagnostic carries: who decided (`coordinator`,
 * the name given to `defineCoordinator`), for which call (`intentId`) and
 * which key (`hash`).
 *
 * @example
 * ```ts
 * const base: CoordinationEventBase = { coordinator: 'dedupe', intentId: 2, hash: '"a"' }
 * ```
 */
export interface CoordinationEventBase {
  coordinator: string
  intentId: number
  hash: string
}

/**
 * The closed set of coordination diagnostics, keyed by `type`. It is merged
 * into core's `RuntimeEventMap`, so `subscribe` narrows them like `task:*`.
 *
 * @example
 * ```ts
 * const reuse: CoordinationEventMap['coordination:reuse'] = {
 *   coordinator: 'dedupe', intentId: 2, hash: '"a"', peerId: 1,
 * }
 * ```
 */
export interface CoordinationEventMap {
  /** `reuse(peer)`: the intent was merged into `peerId`. */
  'coordination:reuse': CoordinationEventBase & { peerId: number }
  /** The intent was dropped (exhaust) because `peerId`, of the same key, is in flight. */
  'coordination:dropped': CoordinationEventBase & { peerId: number }
  /** The restart strategy cancelled these peers (only emitted when there were any). */
  'coordination:restart': CoordinationEventBase & { cancelledPeerIds: readonly number[] }
  /** A waiter was parked; `position` = waiters ahead of it. */
  'coordination:queued': CoordinationEventBase & { position: number }
  /** The coordinator decided nothing; the orphan guard skipped the intent. */
  'coordination:orphaned-intent': CoordinationEventBase
}

declare module '@vega/job-core' {
  interface RuntimeEventMap {
    'coordination:reuse': CoordinationEventMap['coordination:reuse']
    'coordination:dropped': CoordinationEventMap['coordination:dropped']
    'coordination:restart': CoordinationEventMap['coordination:restart']
    'coordination:queued': CoordinationEventMap['coordination:queued']
    'coordination:orphaned-intent': CoordinationEventMap['coordination:orphaned-intent']
  }
}

/**
 * The five diagnostic event types.
 *
 * @example
 * ```ts
 * const isCoordination = (type: string): type is CoordinationEventType => type.startsWith('coordination:')
 * ```
 */
export type CoordinationEventType = keyof CoordinationEventMap

/**
 * A coordination event as a `subscribe` listener receives it (stamped with
 * `seq` and `at`).
 *
 * @example
 * ```ts
 * const log: CoordinationEvent[] = []
 * subscribe(runtime, (e) => {
 *   if (e.type.startsWith('coordination:')) log.push(e as CoordinationEvent)
 * })
 * ```
 */
export type CoordinationEvent = Extract<RuntimeEvent, { type: CoordinationEventType }>

/**
 * What `ctx.emit` accepts: one of the five types with its extra fields; the
 * adapter adds `coordinator`, `intentId` and `hash`. Derived from the closed
 * union, so any other `type` does not type-check.
 *
 * @example
 * ```ts
 * const draft: CoordinationEventDraft = { type: 'coordination:queued', position: 0 }
 * ctx.emit(draft)
 * ```
 */
export type CoordinationEventDraft = {
  [K in CoordinationEventType]: { type: K } & Omit<
    CoordinationEventMap[K],
    keyof CoordinationEventBase
  >
}[CoordinationEventType]

const TYPES: ReadonlySet<string> = new Set<CoordinationEventType>([
  'coordination:reuse',
  'coordination:dropped',
  'coordination:restart',
  'coordination:queued',
  'coordination:orphaned-intent',
])

/**
 * Whether `event` is one of the five coordination diagnostics.
 *
 * @example
 * ```ts
 * subscribe(runtime, (e) => {
 *   if (isCoordinationEvent(e)) console.log(e.coordinator, e.type, e.intentId)
 * })
 * ```
 */
export function isCoordinationEvent(event: { readonly type: string }): event is CoordinationEvent {
  return TYPES.has(event.type)
}
