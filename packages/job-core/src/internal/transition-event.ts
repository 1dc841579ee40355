import type { RuntimeEventMap } from '../types/events.js'
import type { TaskState } from '../types/task.js'
import type { RuntimeEventBus } from './event-bus.js'

/** What a terminal or retry transition reports besides `from` and `to`. */
export type TransitionExtra = Pick<
  RuntimeEventMap['task:transition'],
  'reason' | 'cancelledBy' | 'error'
>

/**
 * A kernel event of type `T` as the kernel builds it: one object literal,
 * its optional fields added after (so writable), with its `seq` and `at`.
 */
export type KernelEvent<T extends keyof RuntimeEventMap> = {
  -readonly [K in keyof RuntimeEventMap[T]]: RuntimeEventMap[T][K]
} & { type: T; seq: number; at: number }

/** Builds the `task:transition` event of a move at `at`, with the bus's next `seq` (someone listens). */
export function transitionEvent(
  bus: RuntimeEventBus,
  at: number,
  taskId: number,
  attempt: number,
  from: TaskState,
  to: TaskState,
  extra: TransitionExtra | undefined,
): KernelEvent<'task:transition'> {
  const event: KernelEvent<'task:transition'> = {
    type: 'task:transition',
    seq: bus.nextSeq(),
    at,
    taskId,
    from,
    to,
    attempt,
  }
  if (extra !== undefined) {
    if (extra.reason !== undefined) event.reason = extra.reason
    if (extra.cancelledBy !== undefined) event.cancelledBy = extra.cancelledBy
    if ('error' in extra) event.error = extra.error
  }
  return event
}
