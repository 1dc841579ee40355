import { toCore } from './internal/runtime-handle.js'
import type { EventBus, RuntimeListener } from './types/events.js'
import type { Runtime } from './types/task.js'

/**
 * Listens to every event of `runtime` (tasks, plugins, the runtime itself),
 * synchronously and in `seq` order. Returns the unsubscribe function.
 *
 * @example
 * ```ts
 * const off = subscribe(runtime, (e) => {
 *   if (e.type === 'task:transition') console.log(`#${e.taskId} ${e.from} → ${e.to}`)
 * })
 * off()
 * ```
 */
export function subscribe(runtime: Runtime, listener: RuntimeListener): () => void {
  return toCore(runtime, 'subscribe(runtime, listener)').bus.subscribe(listener)
}

/**
 * The runtime's event bus, for plugins and custom diagnostics: `emit` stamps
 * `seq` and `at` and delivers to every subscriber. The kernel's own types
 * (`task:*`, `runtime:*`) are refused with a `TypeError`: listeners trust
 * that only the kernel says them.
 *
 * @example
 * ```ts
 * getEventBus(runtime).emit({ type: 'app:cache-hit', key: 'user:1' })
 * ```
 */
export function getEventBus(runtime: Runtime): EventBus {
  return toCore(runtime, 'getEventBus(runtime)').publicBus
}
