import type { RuntimeEvent } from '@vega/job-core'
import { getCurrentInstance, getCurrentScope, onMounted, onScopeDispose } from 'vue'
import { injectRuntime } from './internal/context.js'
import { describe } from './internal/describe.js'
import { hubOf } from './internal/runtime-hub.js'

/**
 * An event that is not in core's `RuntimeEventMap` (a custom diagnostic
 * emitted with `getEventBus(runtime).emit`): its type, its stamp and any fields.
 *
 * @example
 * ```ts fragment
 * useRuntimeEvent('app:cache-hit', (event: CustomRuntimeEvent) => console.log(event.key))
 * ```
 */
export interface CustomRuntimeEvent {
  readonly type: string
  readonly seq: number
  readonly at: number
  readonly [field: string]: unknown
}

/**
 * The event a {@link useRuntimeEvent} listener receives for `type`: the typed
 * member of `RuntimeEvent` for a known type, a {@link CustomRuntimeEvent} otherwise.
 *
 * @example
 * ```ts fragment
 * const onTransition = (event: RuntimeEventOf<'task:transition'>) => console.log(event.to)
 * ```
 */
export type RuntimeEventOf<K extends string> = K extends RuntimeEvent['type']
  ? Extract<RuntimeEvent, { readonly type: K }>
  : CustomRuntimeEvent

/**
 * Calls `listener` with every event of `type` on the provided runtime while
 * the effect scope lives: in a component from its mount (never on the
 * server) to its unmount, a `<KeepAlive>`'s inactive time included.
 * Listeners are called synchronously, in `seq` order, from the runtime's one
 * shared bus listener; they read the runtime after the event.
 *
 * @example
 * ```ts fragment
 * const restarts = ref(0)
 * useRuntimeEvent('task:transition', (event) => {
 *   if (event.to === 'cancelled') restarts.value++
 * })
 * ```
 */
export function useRuntimeEvent<K extends string>(
  type: K,
  listener: (event: RuntimeEventOf<K>) => void,
): void {
  const hub = hubOf(injectRuntime('useRuntimeEvent(type, listener)'))
  if (typeof type !== 'string' || type === '') {
    throw new TypeError(
      `useRuntimeEvent(type, listener): type must be an event type such as 'task:transition', got ${describe(type)}.`,
    )
  }
  if (typeof listener !== 'function') {
    throw new TypeError(
      `useRuntimeEvent(type, listener): listener must be a function, got ${describe(listener)}.`,
    )
  }
  let stop: (() => void) | undefined
  const start = (): void => {
    stop = hub.onEvent(type, (event) => listener(event as RuntimeEventOf<K>))
  }
  if (getCurrentScope() !== undefined) onScopeDispose(() => stop?.())
  if (getCurrentInstance() !== null) onMounted(start)
  else start()
}
