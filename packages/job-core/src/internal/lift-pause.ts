import type { RuntimeCore } from './model.js'

/**
 * Lifts a pause (`resume`, and a draining `shutdown`, which must let queued
 * work run): whatever fits starts before it returns. A no-op when not paused.
 */
export function liftPause(core: RuntimeCore): void {
  const gate = core.gate
  if (gate === undefined || !gate.paused) return
  gate.paused = false
  // Without a rate limit the gate has nothing left to say: the backend drops it.
  if (gate.limiter === undefined) core.backend.setGate!(undefined)
  core.backend.wake!()
}
