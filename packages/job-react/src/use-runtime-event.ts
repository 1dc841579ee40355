import type { RuntimeEvent } from '@vega/job-core'
import { useEffect, useInsertionEffect, useRef } from 'react'
import { useRuntimeStore } from './internal/context.js'
import { describe } from './internal/describe.js'

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
 * Subscribes `listener` to the events of `type` on the provider's runtime for
 * the component's lifetime (mount to unmount), always calling the `listener`
 * of the latest committed render. Listeners are called synchronously, in
 * `seq` order, from the runtime's single bus listener.
 *
 * @example
 * ```ts fragment
 * function RestartLog() {
 *   const [restarts, setRestarts] = useState(0)
 *   useRuntimeEvent('task:transition', (event) => {
 *     if (event.to === 'cancelled') setRestarts((n) => n + 1)
 *   })
 *   return <small>{restarts} calls cancelled</small>
 * }
 * ```
 */
export function useRuntimeEvent<K extends string>(
  type: K,
  listener: (event: RuntimeEventOf<K>) => void,
): void {
  const store = useRuntimeStore('useRuntimeEvent(type, listener)')
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
  const latest = useRef(listener)
  // Written after commit, never during render: a discarded render changes nothing.
  useInsertionEffect(() => {
    latest.current = listener
  })
  useEffect(
    () => store.onEvent(type, (event) => latest.current(event as RuntimeEventOf<K>)),
    [store, type],
  )
}
