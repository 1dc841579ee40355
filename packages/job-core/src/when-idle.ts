import { toCore } from './internal/runtime-handle.js'
import type { Runtime } from './types/task.js'

/**
 * Resolves when no task is live and no body holds a slot (p-queue's
 * `onIdle()`): parked, queued, retrying and running tasks all count, and so
 * does a cancelled body that has not exited (unless `abandonAfter` let it
 * go). Resolves at once on an idle runtime; never rejects.
 *
 * @example
 * ```ts
 * for (const url of urls) run(runtime, () => crawl(url))
 * await whenIdle(runtime)
 * console.log('all done')
 * ```
 */
export function whenIdle(runtime: Runtime): Promise<void> {
  const core = toCore(runtime, 'whenIdle(runtime)')
  if (core.isIdle()) return Promise.resolve()
  return new Promise((resolve) => core.whenIdle(resolve))
}
