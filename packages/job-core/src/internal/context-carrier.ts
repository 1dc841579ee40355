import { OWN_NOT_HANDED_OUT } from './caller-promise.js'
import type { TaskRecord } from './task-record.js'

/**
 * A door back into the async context of the moment it was made, for a body
 * that starts later from somewhere else (a slot freed by another task, a
 * timer, a peer's exit). A promise reaction runs in the context in which it
 * was registered — that is how `AsyncLocalStorage` (and the coming
 * `AsyncContext`) propagate — so the reaction registered here is the door.
 * Made only for a task that waits: a body that starts inside `run()` is
 * already in its context and pays nothing.
 *
 * `carrier(value)` runs the `enter` given at capture with `value`, in the
 * captured context, one microtask later. Once.
 */
export type ContextCarrier<V> = (value: V) => void

/** A carrier whose reaction's own promise is dropped (a retry's next attempt). */
export function captureContext<V>(enter: (value: V) => unknown): ContextCarrier<V> {
  new Promise<V>(capture as (resolve: ContextCarrier<V>) => void).then(enter)
  return takeCaptured()
}

/**
 * The carrier of a task that waits from inside its `run()` call. The
 * reaction's promise becomes the task's own promise: `enter` returns the
 * task, a thenable the promise machinery adopts (see `adoptOwn`), so one
 * pending promise serves both the door and the caller.
 */
export function captureForTask<V>(
  task: TaskRecord,
  enter: (value: V) => TaskRecord | undefined,
): void {
  task.own = new Promise<V>(capture as (resolve: ContextCarrier<V>) => void).then(enter)
  task.resolveOwn = OWN_NOT_HANDED_OUT
  task.carrier = takeCaptured()
}

let captured: ContextCarrier<never> | undefined

function capture(resolve: ContextCarrier<never>): void {
  captured = resolve
}

function takeCaptured<V>(): ContextCarrier<V> {
  const carrier = captured as ContextCarrier<V>
  captured = undefined
  return carrier
}
