import type { StartGate } from '../types/backend.js'
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
