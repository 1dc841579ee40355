import { requireCapability } from './internal/backend-capability.js'
import { toCore } from './internal/runtime-core.js'
import { validateConcurrency } from './internal/validate.js'
import type { Runtime } from './runtime.js'

/**
 * Changes the concurrency limit of a live runtime (p-queue's
 * `concurrency =`). Raising it starts waiting tasks before it returns
 * (priority, then FIFO); lowering it never aborts a running body, it only
 * stops new starts until fewer than `n` run. Same validation as
 * `createRuntime({ concurrency })`; the backend must support
 * `setConcurrency` (the default one does).
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
  const limit = validateConcurrency(n, 'setConcurrency(runtime, n)')
  requireCapability(core.backend, 'setConcurrency', 'setConcurrency(runtime, n)')
  core.backend.setConcurrency!(limit)
}
