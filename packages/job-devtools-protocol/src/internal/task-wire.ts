import type {
  TaskAbandonedEvent,
  TaskCreatedEvent,
  TaskExitedEvent,
  TaskTransitionEvent,
} from '../task-events.js'
import type { WireValue } from '../wire-value.js'

// The wire form of the kernel's task events, built from their fields, shared
// by the encoder (fields read from a runtime event) and the bridge's held
// events (fields kept in columns). An optional field is added only when it
// has a value: with exactOptionalPropertyTypes an explicit `undefined` is not
// "absent", and JSON would drop it anyway. Fields are assigned in wire order,
// the order JSON.stringify writes them.

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

export function isInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value)
}

export function createdEvent(
  taskId: number,
  label: string | undefined,
  parentId: number | undefined,
  key: string | undefined,
): TaskCreatedEvent {
  const out: Mutable<TaskCreatedEvent> = { type: 'task:created', taskId }
  if (label !== undefined) out.label = label
  if (parentId !== undefined) out.parentId = parentId
  if (key !== undefined) out.key = key
  return out
}

/** Without `error` and `value`, which come after `cancelledBy` when present. */
export function transitionEvent(
  taskId: number,
  from: string,
  to: string,
  attempt: number,
  reason: string | undefined,
  cancelledBy: number | undefined,
): Mutable<TaskTransitionEvent> {
  const out: Mutable<TaskTransitionEvent> = { type: 'task:transition', taskId, from, to, attempt }
  if (reason !== undefined) out.reason = reason
  if (cancelledBy !== undefined) out.cancelledBy = cancelledBy
  return out
}

export function exitedEvent(
  taskId: number,
  threw: WireValue | undefined,
  abandoned: boolean,
): TaskExitedEvent {
  const out: Mutable<TaskExitedEvent> = { type: 'task:exited', taskId }
  if (threw !== undefined) out.threw = threw
  if (abandoned) out.abandoned = true
  return out
}

export function abandonedEvent(taskId: number): TaskAbandonedEvent {
  return { type: 'task:abandoned', taskId }
}
