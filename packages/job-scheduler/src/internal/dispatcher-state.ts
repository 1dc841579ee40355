import { IllegalStateError } from '@vega/job-core'
import type { DispatcherState } from '../dispatcher-options.js'

/** The rule every dispatcher's `prepare()` follows: once, and only from `NEW`. */
export function assertPreparable(name: string, state: DispatcherState): void {
  if (state !== 'NEW') {
    throw new IllegalStateError(
      `[${name}] Dispatcher can only be prepared once. Current state: ${state}.`,
    )
  }
}

/**
 * The rule every dispatcher's `start()` follows: whether to start now.
 * Starting again, or after a stop, does nothing; before `prepare()` it throws.
 */
export function startsNow(name: string, state: DispatcherState): boolean {
  if (state === 'RUNNING' || state === 'STOPPED') return false
  if (state !== 'PREPARED') {
    throw new IllegalStateError(
      `[${name}] Dispatcher cannot start from state: ${state}. Call prepare() first.`,
    )
  }
  return true
}
