import type { RuntimeEventMap } from '../events.js'
import type { TaskState } from '../task-state.js'
import type { RuntimeEventBus } from './event-bus.js'

/** What a terminal or retry transition reports besides `from` and `to`. */
export type TransitionExtra = Pick<
  RuntimeEventMap['task:transition'],
  'reason' | 'cancelledBy' | 'error'
>

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** Builds a `task:transition` event at `at` and delivers it (someone listens). */
export function deliverTransition(
  bus: RuntimeEventBus,
  at: number,
  taskId: number,
  attempt: number,
  from: TaskState,
  to: TaskState,
  extra: TransitionExtra | undefined,
): void {
  const event: Mutable<RuntimeEventMap['task:transition']> & {
    type: 'task:transition'
    seq: number
    at: number
  } = {
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
  bus.deliver(event)
}
