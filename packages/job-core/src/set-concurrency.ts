import { IllegalStateError } from './errors.js'
import { requireCapability } from './internal/backend-seam.js'
import { toCore } from './internal/runtime-handle.js'
import { validateConcurrency } from './internal/validate.js'
import type { Runtime } from './types/task.js'

/**
 * Changes the concurrency limit of a live runtime (p-queue's
 * `concurrency =`). Raising it starts waiting tasks before it returns
 * (priority, then FIFO); lowering it never aborts a running body, it only
 * stops new starts until fewer than `n` run. Same validation as
 * `createRuntime({ concurrency })`; the backend must support
 * `setConcurrency` (the default one does). During a drain it still works
 * (raise it to drain faster); once the shutdown has finished it throws an
 * `IllegalStateError`.
 *
 * @example
 * ```ts
 * const runtime = createRuntime({ concurrency: 2 })
 * setConcurrency(runtime, 8) // queued tasks start now, up to 8 at once
 * setConcurrency(runtime, 1) // running bodies finish; then one at a time
 * ```
 */
export function setConcurrency(runtime: Runtime, n: number): void {
  const core = toCore(runtime, 'setConcurrency(runtime, n)')
  if (core.shutdown?.isFinished === true) {
    throw new IllegalStateError(
      `setConcurrency(runtime, n): runtime ${core.name} has shut down and runs nothing any more; create a new runtime.`,
    )
  }
  const limit = validateConcurrency(n, 'setConcurrency(runtime, n)')
  requireCapability(core.backend, 'setConcurrency', 'setConcurrency(runtime, n)')
  core.backend.setConcurrency!(limit)
}
