import type { EnvelopeSource } from './envelope.js'
import type { WireValue } from './wire-value.js'

/**
 * One entry of a task's timeline, discriminated by `kind`. Every entry keeps
 * the `seq` and `ts` of the envelope it came from.
 *
 * - `created`: `task:created`.
 * - `transition`: `task:transition` (`from` → `to`, with `reason`, `cancelledBy`, `error`).
 * - `retry`: `task:retry`.
 * - `exited`: `task:exited` (a cancelled body finally left; `abandoned` when its slot had been released already).
 * - `abandoned`: `task:abandoned` (the runtime released the slot of a body that ignored its signal).
 * - `reuse` / `dropped` / `restart` / `queued` / `orphaned-intent`: what a coordinator did with this intent.
 * - `snapshot`: a `session:snapshot` showed a state this timeline had not seen.
 * - `lost`: a snapshot no longer listed this live task; it ended unobserved (during a gap).
 *
 * @example
 * ```ts
 * const entry: TimelineEntry = { kind: 'transition', seq: 4, ts: 10, from: 'running', to: 'success', attempt: 1 }
 * ```
 */
export type TimelineEntry =
  | { readonly kind: 'created'; readonly seq: number; readonly ts: number }
  | {
      readonly kind: 'transition'
      readonly seq: number
      readonly ts: number
      readonly from: string
      readonly to: string
      readonly reason?: string
      readonly cancelledBy?: number
      readonly error?: WireValue
      readonly attempt: number
    }
  | {
      readonly kind: 'retry'
      readonly seq: number
      readonly ts: number
      readonly attempt: number
      readonly delay: number
      readonly error: WireValue
    }
  | {
      readonly kind: 'exited'
      readonly seq: number
      readonly ts: number
      readonly threw?: WireValue
      readonly abandoned?: true
    }
  | { readonly kind: 'abandoned'; readonly seq: number; readonly ts: number }
  | {
      readonly kind: 'reuse'
      readonly seq: number
      readonly ts: number
      readonly coordinator: string
      readonly peerId: number
    }
  | {
      readonly kind: 'dropped'
      readonly seq: number
      readonly ts: number
      readonly coordinator: string
      readonly peerId: number
    }
  | {
      readonly kind: 'restart'
      readonly seq: number
      readonly ts: number
      readonly coordinator: string
      readonly cancelledPeerIds: readonly number[]
    }
  | {
      readonly kind: 'queued'
      readonly seq: number
      readonly ts: number
      readonly coordinator: string
      readonly position: number
    }
  | {
      readonly kind: 'orphaned-intent'
      readonly seq: number
      readonly ts: number
      readonly coordinator: string
    }
  | {
      readonly kind: 'snapshot'
      readonly seq: number
      readonly ts: number
      readonly state: string
      readonly attempt: number
    }
  | { readonly kind: 'lost'; readonly seq: number; readonly ts: number }

/**
 * How a task relates to others.
 *
 * - `reuses`: the peer whose promise this task's caller received (dedupe).
 * - `reusedBy`: the intents that received this task's promise.
 * - `cancelledBy`: the task whose coordination or shaping cancelled this one (restart).
 * - `cancelled`: the tasks this one cancelled.
 * - `queuedBehind`: the task directly ahead of this one in a serialize queue,
 *   inferred as the latest earlier live task with the same key.
 * - `children`: tasks started with `ctx.run` inside this one.
 *
 * @example
 * ```ts
 * const links: TaskLinks = { reusedBy: [2, 3], cancelled: [], children: [] }
 * ```
 */
export interface TaskLinks {
  readonly reuses?: number
  readonly reusedBy: readonly number[]
  readonly cancelledBy?: number
  readonly cancelled: readonly number[]
  readonly queuedBehind?: number
  readonly children: readonly number[]
}

/**
 * Everything the reducer knows of one task: its last known state and its
 * ordered timeline.
 *
 * @example
 * ```ts
 * const done = timelines(state, sid).filter((task) => task.state === 'success')
 * ```
 */
export interface TaskTimeline {
  readonly id: number
  readonly label?: string
  readonly key?: string
  readonly parentId?: number
  /** The last known state; a state a newer producer added is kept as is. */
  readonly state: string
  readonly attempt: number
  /** `ts` of the envelope that put the task in `state`. */
  readonly since: number
  readonly cancelReason?: string
  readonly error?: WireValue
  /** Set when a snapshot stopped listing the task before its end was seen. */
  readonly lost?: true
  readonly entries: readonly TimelineEntry[]
  readonly links: TaskLinks
}

/**
 * A gap the reducer knows of: announced by `session:gap`, or `missed` when
 * the sequence jumped without an announcement.
 *
 * @example
 * ```ts
 * const gap: GapRecord = { fromSeq: 5, toSeq: 9, reason: 'overflow' }
 * ```
 */
export interface GapRecord {
  readonly fromSeq: number
  readonly toSeq: number
  readonly reason: string
}

/**
 * One producer's session, as the reducer rebuilt it.
 *
 * @example
 * ```ts
 * const session: SessionState | undefined = state.sessions[sid]
 * if (session?.stale) transport.requestSnapshot()
 * ```
 */
export interface SessionState {
  readonly sid: string
  readonly src: EnvelopeSource
  /** The producer's minor version, once `session:hello` was seen. */
  readonly minor?: number
  readonly capabilities: readonly string[]
  /** The highest `seq` applied; envelopes at or below it are duplicates. */
  readonly lastSeq: number
  readonly lastTs: number
  /** True from a gap until the next `session:snapshot`. */
  readonly stale: boolean
  readonly gaps: readonly GapRecord[]
  /** Tasks by id (as a string key, to stay plain JSON). */
  readonly tasks: { readonly [taskId: string]: TaskTimeline }
  /** Task ids in the order the reducer first saw them. */
  readonly taskOrder: readonly number[]
  /** Events whose `type` this version does not know (a newer producer, custom diagnostics). */
  readonly unknownEvents: number
}

/**
 * The reducer's whole state: plain, JSON-able data.
 *
 * @example
 * ```ts
 * const saved = JSON.stringify(state) // and JSON.parse(saved) is a valid state again
 * ```
 */
export interface DevtoolsState {
  readonly sessions: { readonly [sid: string]: SessionState }
  /** Session ids in the order they were first seen. */
  readonly sessionOrder: readonly string[]
  /** Messages that were not v1 envelopes (another major, not an envelope at all). */
  readonly rejected: number
}
