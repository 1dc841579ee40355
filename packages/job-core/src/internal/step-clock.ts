import { systemClock } from '../clock.js'
import type { RuntimeCore } from './runtime-core.js'

// While someone listens, every transition carries a clock reading (`at`),
// and a task makes four of them (created, queued, running, ended): on a VM a
// reading costs 40–80 ns, about as much as building and delivering the
// event. But transitions come in steps — one `run()` call (created, queued,
// maybe running), one body's exit (its ending, and the starts of the tasks
// that take its slot) — and within a step nothing but the kernel, its
// plugins and the listeners runs. The transitions of one step therefore
// share the step's reading: half the readings of a listened task.
//
// A body is not part of a step: entering one drops the reading, so a body
// that runs synchronously inside run() is timed after it returns. Only the
// system clock is shared: a test clock can be advanced from a listener, and
// reading it costs nothing worth saving.

/**
 * Opens a step: from here until {@link closeStep}, {@link stepNow} returns
 * one reading. `false` when a step is already open (its reading is kept,
 * and only its opener closes it) or the runtime is on another clock.
 */
export function openStep(core: RuntimeCore): boolean {
  if (core.stepAt !== undefined || core.clock !== systemClock) return false
  core.stepAt = Date.now()
  return true
}

/** Ends the step its opener opened (see {@link openStep}). */
export function closeStep(core: RuntimeCore): void {
  core.stepAt = undefined
}

/** The open step's reading, or a fresh one outside a step. */
export function stepNow(core: RuntimeCore): number {
  return core.stepAt ?? core.clock.now()
}
