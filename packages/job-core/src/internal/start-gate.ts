import type { Backend, StartGate } from '../types/backend.js'
import type { RateLimiter } from './rate-limit.js'

/**
 * The one gate the kernel gives a backend (`Backend.setGate`): the pause
 * switch, then the rate limit. A paused runtime spends no rate-limit start.
 */
export class KernelGate implements StartGate {
  paused = false
  readonly limiter: RateLimiter | undefined

  constructor(limiter: RateLimiter | undefined) {
    this.limiter = limiter
  }

  tryStart(): boolean {
    if (this.paused) return false
    return this.limiter === undefined || this.limiter.tryAcquire()
  }
}

/**
 * Lifts a pause (`resume`, and a draining `shutdown`, which must let queued
 * work run): whatever fits starts before it returns. A no-op when not paused.
 */
export function liftPause(core: {
  readonly gate: KernelGate | undefined
  readonly backend: Pick<Backend, 'setGate' | 'wake'>
}): void {
  const gate = core.gate
  if (gate === undefined || !gate.paused) return
  gate.paused = false
  // Without a rate limit the gate has nothing left to say: the backend drops it.
  if (gate.limiter === undefined) core.backend.setGate!(undefined)
  core.backend.wake!()
}
