import { waitForQueueBelow } from './internal/counters.js'
import { show } from './internal/resolve-control.js'
import { toCore } from './internal/runtime-handle.js'
import type { Runtime } from './types/task.js'

/**
 * Resolves once fewer than `n` tasks are `queued` (p-queue's
 * `onSizeLessThan`): a producer awaits it before pushing more. At once when
 * that is already so; never rejects.
 *
 * @example
 * ```ts
 * for await (const message of stream) {
 *   await whenQueueBelow(runtime, 100)
 *   run(runtime, () => handle(message))
 * }
 * ```
 */
export function whenQueueBelow(runtime: Runtime, n: number): Promise<void> {
  const core = toCore(runtime, 'whenQueueBelow(runtime, n)')
  if (
    typeof n !== 'number' ||
    Number.isNaN(n) ||
    n < 1 ||
    !(Number.isInteger(n) || n === Number.POSITIVE_INFINITY)
  ) {
    throw new RangeError(
      `whenQueueBelow(runtime, n): n must be an integer ≥ 1 (it resolves once queued < n), got ${show(n)}.`,
    )
  }
  return waitForQueueBelow(core, n)
}
