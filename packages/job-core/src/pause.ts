import { IllegalStateError } from './errors.js'
import { requireCapability } from './internal/backend-seam.js'
import { toCore } from './internal/runtime-handle.js'
import { KernelGate, liftPause } from './internal/start-gate.js'
import type { Runtime } from './types/task.js'

/**
 * Stops new bodies from starting: `run()` still admits, and tasks wait in
 * `queued`; running bodies go on; retry delays and timers still run. Undo
 * with {@link resume}. The backend must support `setGate` (the default one
 * does); otherwise a `TypeError` names what is missing. Once `shutdown()`
 * has begun it throws an `IllegalStateError`: a paused drain could never
 * finish (`resume` stays allowed, and does nothing then).
 *
 * @example
 * ```ts
 * pause(runtime)
 * const task = run(runtime, work) // task.state === 'queued'
 * resume(runtime) // task.state === 'running'
 * ```
 */
export function pause(runtime: Runtime): void {
  const core = toCore(runtime, 'pause(runtime)')
  if (core.shutdown !== undefined) {
    // A paused drain would wait forever for work that may not start.
    throw new IllegalStateError(
      `pause(runtime): runtime ${core.name} ${core.shutdown.isFinished ? 'has shut down' : 'is shutting down'}; a shutdown runs or cancels the remaining work and cannot be paused. Use shutdown(runtime, { mode: 'cancel' }) to stop sooner.`,
    )
  }
  requireCapability(core.backend, 'setGate', 'pause(runtime)')
  const gate = core.gate ?? new KernelGate(undefined)
  if (gate.paused) return
  // A wrapping backend may still refuse (its inner one lacks the capability): then nothing changed.
  core.backend.setGate!(gate)
  core.gate = gate
  gate.paused = true
}

/**
 * Lets a paused runtime start bodies again: whatever fits starts
 * synchronously, before `resume` returns (priority, then FIFO). A no-op on a
 * runtime that is not paused. A draining `shutdown` resumes a paused runtime
 * too: it promises that queued work runs to the end.
 *
 * @example
 * ```ts
 * pause(runtime)
 * run(runtime, work)
 * resume(runtime) // work's body has started
 * ```
 */
export function resume(runtime: Runtime): void {
  liftPause(toCore(runtime, 'resume(runtime)'))
}

/**
 * Whether {@link pause} holds the runtime.
 *
 * @example
 * ```ts
 * if (isPaused(runtime)) resume(runtime)
 * ```
 */
export function isPaused(runtime: Runtime): boolean {
  return toCore(runtime, 'isPaused(runtime)').gate?.paused === true
}
