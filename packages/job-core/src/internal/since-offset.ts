import { systemClock } from '../clock.js'
import type { RuntimeCore } from './model.js'

/**
 * A clock reading (now, unless given) as an offset from the runtime's first
 * one, made a small integer whenever it is one. A difference of two epoch
 * readings is a heap number as computed (a heap object per record when stored), and
 * one stored heap number turns the field into a boxed double for every
 * record after it. Fractional clocks and runtimes older than 24 days keep
 * the plain number.
 */
export function sinceOffsetAt(core: RuntimeCore, at?: number): number {
  // The system clock is read here, not through the clock object: returned
  // from a call that is not inlined, an epoch reading is a fresh heap
  // number (a heap object per transition).
  const offset =
    (at ?? (core.clock === systemClock ? Date.now() : core.clock.now())) - core.clockOrigin
  const small = offset | 0
  return small === offset ? small : offset
}
