import type { WireEvent } from '../protocol-events.js'
import type { RawEvent } from './encode-event.js'
import { abandonedEvent, createdEvent, exitedEvent, isInt, transitionEvent } from './task-wire.js'

// What a row holds: an event encoded at delivery, or the fields of one of the
// kernel's plain task events.
const ENCODED = 0
const CREATED = 1
const TRANSITION = 2
const EXITED = 3
const EXITED_ABANDONED = 4
const ABANDONED = 5

/** The {@link heldKind} of an event that has to be encoded at delivery. */
export const ENCODE_NOW: number = ENCODED

/**
 * How `e` can wait for a flush: as its fields (a task event carrying only
 * numbers and strings — created, a transition without `error` or `value`, an
 * exit without `threw`, abandoned), or {@link ENCODE_NOW} when encoding it
 * walks a value or calls the sanitize hook, which must happen at delivery.
 */
export function heldKind(e: RawEvent): number {
  switch (e.type) {
    case 'task:transition':
      return isInt(e.taskId) &&
        typeof e.from === 'string' &&
        typeof e.to === 'string' &&
        e.error === undefined &&
        !('value' in e)
        ? TRANSITION
        : ENCODED
    case 'task:created':
      return isInt(e.taskId) ? CREATED : ENCODED
    case 'task:exited':
      if (!isInt(e.taskId) || 'threw' in e) return ENCODED
      return e.abandoned === true ? EXITED_ABANDONED : EXITED
    case 'task:abandoned':
      return isInt(e.taskId) ? ABANDONED : ENCODED
    default:
      return ENCODED
  }
}

/**
 * What a bridge's ring buffer holds, one row per slot, in columns: the `ts`
 * of each envelope-to-be, and either the wire event encoded at delivery or
 * the primitive fields of a plain task event, copied into typed columns and
 * built into its wire event only by {@link take} at the flush. In a burst
 * that overflows the buffer, most rows are overwritten before any flush: a
 * plain event then costs a few writes and no object, and the runtime's event
 * object is not kept alive (nor read again later, so an event object reused
 * or changed after delivery cannot change what is sent).
 */
export class HeldEvents {
  // Columns grow on demand up to `capacity` (a large bufferSize that is never
  // filled costs nothing); a slot index is always below the ring's capacity.
  private kinds: Uint8Array
  private stamps: Float64Array
  private taskIds: Float64Array
  /** `attempt` of a transition, `parentId` of a created (NaN: none). */
  private numbersA: Float64Array
  /** `cancelledBy` of a transition (NaN: none). */
  private numbersB: Float64Array
  /** `from` of a transition, `label` of a created. */
  private readonly textsA: (string | undefined)[] = []
  /** `to` of a transition, `key` of a created. */
  private readonly textsB: (string | undefined)[] = []
  /** `reason` of a transition. */
  private readonly textsC: (string | undefined)[] = []
  private readonly encoded: (WireEvent | undefined)[] = []

  constructor(readonly capacity: number) {
    const initial = Math.min(capacity, INITIAL_ROWS)
    this.kinds = new Uint8Array(initial)
    this.stamps = new Float64Array(initial)
    this.taskIds = new Float64Array(initial)
    this.numbersA = new Float64Array(initial)
    this.numbersB = new Float64Array(initial)
    this.fillTexts(initial)
  }

  /** Keeps an event already encoded. */
  holdEncoded(slot: number, event: WireEvent, ts: number): void {
    if (slot >= this.kinds.length) this.grow(slot)
    this.kinds[slot] = ENCODED
    this.stamps[slot] = ts
    this.encoded[slot] = event
  }

  /** Keeps the fields of `e`, whose {@link heldKind} is `kind` (not {@link ENCODE_NOW}). */
  holdFields(slot: number, kind: number, e: RawEvent, ts: number): void {
    if (slot >= this.kinds.length) this.grow(slot)
    this.kinds[slot] = kind
    this.stamps[slot] = ts
    this.taskIds[slot] = e.taskId as number
    this.encoded[slot] = undefined
    if (kind === TRANSITION) {
      this.textsA[slot] = e.from as string
      this.textsB[slot] = e.to as string
      this.numbersA[slot] = typeof e.attempt === 'number' ? e.attempt : 0
      this.textsC[slot] = typeof e.reason === 'string' ? e.reason : undefined
      this.numbersB[slot] = isInt(e.cancelledBy) ? e.cancelledBy : Number.NaN
    } else if (kind === CREATED) {
      this.textsA[slot] = typeof e.label === 'string' ? e.label : undefined
      this.textsB[slot] = typeof e.key === 'string' ? e.key : undefined
      this.numbersA[slot] = isInt(e.parentId) ? e.parentId : Number.NaN
    }
  }

  stamp(slot: number): number {
    return this.stamps[slot] as number
  }

  /** The wire event of a row; the row lets go of what it referenced. */
  take(slot: number): WireEvent {
    const taskId = this.taskIds[slot] as number
    switch (this.kinds[slot]) {
      case TRANSITION:
        return transitionEvent(
          taskId,
          this.textsA[slot] as string,
          this.textsB[slot] as string,
          this.numbersA[slot] as number,
          this.textsC[slot],
          present(this.numbersB[slot] as number),
        )
      case CREATED:
        return createdEvent(
          taskId,
          this.textsA[slot],
          present(this.numbersA[slot] as number),
          this.textsB[slot],
        )
      case EXITED:
        return exitedEvent(taskId, undefined, false)
      case EXITED_ABANDONED:
        return exitedEvent(taskId, undefined, true)
      case ABANDONED:
        return abandonedEvent(taskId)
      default: {
        const event = this.encoded[slot] as WireEvent
        this.encoded[slot] = undefined
        return event
      }
    }
  }

  private grow(slot: number): void {
    const rows = Math.min(this.capacity, Math.max(slot + 1, this.kinds.length * 2))
    this.kinds = widened(this.kinds, new Uint8Array(rows))
    this.stamps = widened(this.stamps, new Float64Array(rows))
    this.taskIds = widened(this.taskIds, new Float64Array(rows))
    this.numbersA = widened(this.numbersA, new Float64Array(rows))
    this.numbersB = widened(this.numbersB, new Float64Array(rows))
    this.fillTexts(rows)
  }

  private fillTexts(rows: number): void {
    for (let row = this.encoded.length; row < rows; row += 1) {
      this.textsA.push(undefined)
      this.textsB.push(undefined)
      this.textsC.push(undefined)
      this.encoded.push(undefined)
    }
  }
}

const INITIAL_ROWS = 256

function widened<T extends Uint8Array | Float64Array>(from: T, to: T): T {
  to.set(from)
  return to
}

function present(value: number): number | undefined {
  return Number.isNaN(value) ? undefined : value
}
