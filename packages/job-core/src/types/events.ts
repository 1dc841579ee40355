// The event bus: every event the kernel emits, and the bus's own shape.

import type { CancelReason, TaskState } from './task.js'

/**
 * The payloads of every known event type, keyed by `type`. Plugins add theirs
 * by declaration merging, so `subscribe` narrows them too:
 *
 * @example
 * ```ts
 * declare module '@vega/job-core' {
 *   interface RuntimeEventMap {
 *     'cache:hit': { key: string }
 *   }
 * }
 * ```
 */
export interface RuntimeEventMap {
  'task:created': {
    taskId: number
    label: string | undefined
    parentId?: number
    /** The key hash, when a binding (coordinator, shaper) gave the task one. */
    key?: string
  }
  'task:transition': {
    taskId: number
    from: TaskState
    to: TaskState
    reason?: CancelReason
    cancelledBy?: number
    error?: unknown
    attempt: number
  }
  'task:retry': { taskId: number; attempt: number; delay: number; error: unknown }
  /** `abandoned: true` when `abandonAfter` had already released the body's slot. */
  'task:exited': { taskId: number; threw?: unknown; abandoned?: true }
  /** `createRuntime({ abandonAfter })` released the slot of a body that ignored its signal. */
  'task:abandoned': { taskId: number }
  'runtime:shutdown': { phase: 'started' | 'escalated' | 'finished' }
  'runtime:listener-error': { error: unknown; eventType: string; eventSeq: number }
}

/**
 * Fields the bus stamps on every event: `seq` increases by one per emitted
 * event in a runtime; `at` is the runtime clock's time. With the system
 * clock, the events of one synchronous stretch may share one `Date.now()`
 * reading (up to 16 stamps per reading; see the package README, Events).
 *
 * @example
 * ```ts
 * subscribe(rt, (e) => console.log(e.seq, e.at, e.type))
 * ```
 */
export interface EventStamp {
  readonly seq: number
  readonly at: number
}

/**
 * An event as a listener receives it: one member per entry of
 * {@link RuntimeEventMap}, discriminated by `type`.
 *
 * @example
 * ```ts
 * subscribe(rt, (e) => {
 *   if (e.type === 'task:transition') console.log(e.taskId, e.from, '→', e.to)
 * })
 * ```
 */
export type RuntimeEvent = {
  [K in keyof RuntimeEventMap]: { readonly type: K } & EventStamp & Readonly<RuntimeEventMap[K]>
}[keyof RuntimeEventMap]

/**
 * A `task:transition` event, as listeners and `watch` get it.
 *
 * @example
 * ```ts
 * const onMove = (e: TaskTransitionEvent) => console.log(`#${e.taskId} ${e.from} → ${e.to}`)
 * watch(run(rt, work), onMove)
 * ```
 */
export type TaskTransitionEvent = Extract<RuntimeEvent, { readonly type: 'task:transition' }>

/**
 * An event before the bus stamps it. Known types are checked against
 * {@link RuntimeEventMap} (which plugins extend with their own); any other
 * `type` is accepted as a custom diagnostic. The kernel's own types
 * (`task:*`, `runtime:*`) are in the map for listeners, and `emit` refuses
 * them at run time: only the kernel says them.
 *
 * @example
 * ```ts
 * const draft: RuntimeEventDraft = { type: 'task:exited', taskId: 1 } // as the kernel builds it
 * ```
 */
export type RuntimeEventDraft = {
  [K in keyof RuntimeEventMap]: { type: K } & RuntimeEventMap[K]
}[keyof RuntimeEventMap]

/**
 * A custom diagnostic that is not in {@link RuntimeEventMap}. Listeners must
 * tolerate event types they do not know.
 *
 * @example
 * ```ts
 * const draft: CustomEventDraft = { type: 'app:cache-miss', key: 'user:1' }
 * getEventBus(rt).emit(draft)
 * ```
 */
export interface CustomEventDraft {
  type: string
  [field: string]: unknown
}

/**
 * A subscriber. Listeners are called synchronously, in `seq` order; one that
 * throws is reported as `runtime:listener-error` and does not stop the others.
 *
 * @example
 * ```ts
 * const listener: RuntimeListener = (e) => console.log(e.type)
 * ```
 */
export type RuntimeListener = (event: RuntimeEvent) => void

/**
 * One runtime's event bus.
 *
 * @example
 * ```ts
 * const bus = getEventBus(rt)
 * const off = bus.subscribe((e) => log(e))
 * bus.emit({ type: 'app:ready', at: 'boot' })
 * off()
 * ```
 */
export interface EventBus {
  /** Whether anyone listens; emitters use it to skip building event objects. */
  readonly active: boolean
  /** Stamps `seq` and `at`, then delivers synchronously. */
  emit(draft: RuntimeEventDraft | CustomEventDraft): void
  /** Returns the unsubscribe function. */
  subscribe(listener: RuntimeListener): () => void
}
