// How a task ended, as settle() reports it.

import type { CancelledError } from '../errors.js'
import type { CancelReason } from './task.js'

/**
 * How a task ended, as {@link settle} reports it. Never a rejection.
 *
 * @example
 * ```ts
 * const outcome: Outcome<number> = await settle(task)
 * if (outcome.status === 'success') console.log(outcome.value)
 * ```
 */
export type Outcome<T> =
  | { readonly status: 'success'; readonly value: T }
  | { readonly status: 'error'; readonly error: unknown }
  | { readonly status: 'cancelled'; readonly reason: CancelReason; readonly error: CancelledError }
