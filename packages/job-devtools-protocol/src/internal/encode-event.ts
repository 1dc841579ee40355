import type { PassthroughEvent, ProtocolEvent, WireEvent } from '../protocol-events.js'
import type { TaskTransitionEvent } from '../task-events.js'
import { type ToWireOptions, toWire } from '../to-wire.js'
import type { WireObject, WireValue } from '../wire-value.js'
import { abandonedEvent, createdEvent, exitedEvent, isInt, transitionEvent } from './task-wire.js'

/** What the sanitize hook sees: one task-data field of one event. */
export interface PayloadField {
  readonly eventType: string
  readonly field: string
  readonly taskId?: number
  readonly value: unknown
}

export interface EncodeContext {
  readonly wire: ToWireOptions
  /** Absent: task data is never sent. Returns `undefined` to leave a field out. */
  readonly sanitize: ((payload: PayloadField) => unknown) | undefined
}

export type RawEvent = { readonly type: string; readonly [field: string]: unknown }

// Fields that carry what a task received or produced. They stay home unless
// the user's sanitize hook returns something for them.
const PAYLOAD_FIELDS: ReadonlySet<string> = new Set([
  'input',
  'inputs',
  'args',
  'value',
  'result',
  'output',
])

// Stamped by the bus; the envelope has its own seq and ts.
const STAMP_FIELDS: ReadonlySet<string> = new Set(['type', 'seq', 'at'])

/** Turns one runtime event into its wire form. Never throws. */
export function encodeEvent(raw: RawEvent, context: EncodeContext): WireEvent {
  const known = encodeKnown(raw, context)
  return known ?? encodePassthrough(raw, context)
}

function encodeKnown(e: RawEvent, context: EncodeContext): ProtocolEvent | undefined {
  switch (e.type) {
    case 'task:created':
      if (!isInt(e.taskId)) return undefined
      return createdEvent(
        e.taskId,
        typeof e.label === 'string' ? e.label : undefined,
        isInt(e.parentId) ? e.parentId : undefined,
        typeof e.key === 'string' ? e.key : undefined,
      )
    case 'task:transition':
      if (!isInt(e.taskId) || typeof e.from !== 'string' || typeof e.to !== 'string') {
        return undefined
      }
      return transition(e, e.taskId, e.from, e.to, context)
    case 'task:retry':
      if (!isInt(e.taskId) || typeof e.attempt !== 'number' || typeof e.delay !== 'number') {
        return undefined
      }
      return {
        type: 'task:retry',
        taskId: e.taskId,
        attempt: e.attempt,
        delay: e.delay,
        error: toWire(e.error, context.wire),
      }
    case 'task:exited':
      if (!isInt(e.taskId)) return undefined
      return exitedEvent(
        e.taskId,
        'threw' in e ? toWire(e.threw, context.wire) : undefined,
        e.abandoned === true,
      )
    case 'task:abandoned':
      return isInt(e.taskId) ? abandonedEvent(e.taskId) : undefined
    case 'coordination:reuse':
      return coordination(e, (base) =>
        isInt(e.peerId) ? { type: 'coordination:reuse', ...base, peerId: e.peerId } : undefined,
      )
    case 'coordination:dropped':
      return coordination(e, (base) =>
        isInt(e.peerId) ? { type: 'coordination:dropped', ...base, peerId: e.peerId } : undefined,
      )
    case 'coordination:restart':
      return coordination(e, (base) =>
        Array.isArray(e.cancelledPeerIds) && e.cancelledPeerIds.every(isInt)
          ? { type: 'coordination:restart', ...base, cancelledPeerIds: [...e.cancelledPeerIds] }
          : undefined,
      )
    case 'coordination:queued':
      return coordination(e, (base) =>
        typeof e.position === 'number'
          ? { type: 'coordination:queued', ...base, position: e.position }
          : undefined,
      )
    case 'coordination:orphaned-intent':
      return coordination(e, (base) => ({ type: 'coordination:orphaned-intent', ...base }))
    case 'runtime:shutdown':
      return typeof e.phase === 'string' ? { type: 'runtime:shutdown', phase: e.phase } : undefined
    case 'runtime:listener-error':
      return {
        type: 'runtime:listener-error',
        error: toWire(e.error, context.wire),
        eventType: typeof e.eventType === 'string' ? e.eventType : '',
        eventSeq: typeof e.eventSeq === 'number' ? e.eventSeq : 0,
      }
    default:
      return undefined
  }
}

function transition(
  e: RawEvent,
  taskId: number,
  from: string,
  to: string,
  context: EncodeContext,
): TaskTransitionEvent {
  const out = transitionEvent(
    taskId,
    from,
    to,
    typeof e.attempt === 'number' ? e.attempt : 0,
    typeof e.reason === 'string' ? e.reason : undefined,
    isInt(e.cancelledBy) ? e.cancelledBy : undefined,
  )
  if (e.error !== undefined) out.error = toWire(e.error, context.wire)
  if ('value' in e) {
    const value = payload(e, 'value', taskId, context)
    if (value !== undefined) out.value = value
  }
  return out
}

interface CoordinationBase {
  readonly coordinator: string
  readonly intentId: number
  readonly hash: string
}

function coordination(
  e: RawEvent,
  build: (base: CoordinationBase) => ProtocolEvent | undefined,
): ProtocolEvent | undefined {
  if (typeof e.coordinator !== 'string' || !isInt(e.intentId) || typeof e.hash !== 'string') {
    return undefined
  }
  return build({ coordinator: e.coordinator, intentId: e.intentId, hash: e.hash })
}

function encodePassthrough(e: RawEvent, context: EncodeContext): PassthroughEvent {
  const fields: Record<string, WireValue> = {}
  const taskId = isInt(e.taskId) ? e.taskId : undefined
  for (const field of safeKeys(e)) {
    if (STAMP_FIELDS.has(field)) continue
    const value = PAYLOAD_FIELDS.has(field)
      ? payload(e, field, taskId, context)
      : encodeField(e, field, context.wire)
    if (value === undefined) continue
    if (field === '__proto__') {
      Object.defineProperty(fields, field, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      })
    } else {
      fields[field] = value
    }
  }
  return { type: e.type, fields: fields as WireObject }
}

function payload(
  e: RawEvent,
  field: string,
  taskId: number | undefined,
  context: EncodeContext,
): WireValue | undefined {
  if (context.sanitize === undefined) return undefined
  let kept: unknown
  try {
    kept = context.sanitize(
      taskId === undefined
        ? { eventType: e.type, field, value: readField(e, field) }
        : { eventType: e.type, field, taskId, value: readField(e, field) },
    )
  } catch (error) {
    // A failing hook must not leak the raw value; say what happened instead.
    return toWire(new Error('sanitize hook threw', { cause: error }), context.wire)
  }
  return kept === undefined ? undefined : toWire(kept, context.wire)
}

function safeKeys(e: RawEvent): string[] {
  try {
    return Object.keys(e)
  } catch {
    return []
  }
}

function readField(e: RawEvent, field: string): unknown {
  try {
    return e[field]
  } catch {
    return undefined
  }
}

function encodeField(e: RawEvent, field: string, wire: ToWireOptions): WireValue {
  let value: unknown
  try {
    value = e[field]
  } catch (error) {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : 'unreadable'
    return { __type: 'Unreadable', message }
  }
  return toWire(value, wire)
}
