import { systemClock } from '../clock.js'
import type { RuntimeCore } from './runtime-core.js'

// What `since` is made of when nobody listens to events. A reading of the
// system clock costs 60–80 ns on a VM, and a task that waits is seen in two
// states (queued, running): without sharing, the clock was about a tenth of
// what the kernel spends on a trivial task. So one reading serves every
// transition of one synchronous stretch: it is taken at the first of them
// and expires at the next microtask checkpoint, before anything else (a
// timer, I/O, another turn of the event loop) can run. `since` is then the
// clock time of the stretch in which the task entered its state — earlier
// than the exact moment by at most the time that stretch of JavaScript ran.
//
// Only the system clock is shared: a clock given to createRuntime is read
// at every transition (a test clock advances synchronously), and with a
// listener every transition reads its own `at`.

let reading: number | undefined
const CHECKPOINT = Promise.resolve()

function expire(): void {
  reading = undefined
}

/** The runtime clock's time for a transition nobody listens to. */
export function sharedReading(core: RuntimeCore): number {
  if (core.clock !== systemClock) return core.clock.now()
  if (reading === undefined) {
    // Read directly, not through the clock object: returned from a call
    // that is not inlined, an epoch reading is a fresh heap number.
    reading = Date.now()
    CHECKPOINT.then(expire)
  }
  return reading
}
