import { assertKnownKeys } from '../assert-known-keys.js'
import { isCancelledError } from '../errors.js'
import type { RetryPolicy } from '../types/task.js'
import type { ResolvedRetry, TaskRecord } from './model.js'
import { extrasOf } from './task-extras.js'
import { describeValue, type OptionName, validateMs } from './validate.js'

const RETRY_KEYS: readonly (keyof RetryPolicy)[] = ['attempts', 'delay', 'retryIf']

const BASE_DELAY_MS = 100
const MAX_DELAY_MS = 30_000

/**
 * The default delay before attempt `attempt + 1`: exponential
 * 100·2^(attempt-1) ms capped at 30 s, scaled by full jitter so that many
 * clients failing together do not retry in lockstep.
 */
export function defaultRetryDelay(attempt: number, random: () => number): number {
  const ceiling = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (attempt - 1))
  return Math.floor(random() * ceiling)
}

export function resolveRetry(
  retry: number | RetryPolicy | undefined,
  where: OptionName,
): ResolvedRetry | undefined {
  if (retry === undefined) return undefined
  const policy: RetryPolicy = typeof retry === 'number' ? { attempts: retry } : retry
  if (policy === null || typeof policy !== 'object') {
    throw new TypeError(
      `${where()}: retry must be a number of attempts or { attempts, delay?, retryIf? }, got ${describeValue(retry)}.`,
    )
  }
  assertKnownKeys(where(), policy, RETRY_KEYS)
  const { attempts, delay, retryIf } = policy
  if (typeof attempts !== 'number' || !Number.isSafeInteger(attempts) || attempts < 1) {
    throw new RangeError(
      `${where()}: attempts must be a whole number ≥ 1 (the first attempt included), got ${describeValue(attempts)}.`,
    )
  }
  if (delay !== undefined && typeof delay !== 'function') validateMs(delay, where('delay'))
  if (retryIf !== undefined && typeof retryIf !== 'function') {
    throw new TypeError(
      `${where('retryIf')}: retryIf must be a function (error, attempt) => boolean, got ${describeValue(retryIf)}.`,
    )
  }
  if (attempts === 1) return undefined
  return {
    attempts,
    delayFor(attempt, error, random) {
      if (delay === undefined) {
        return validateMs(
          defaultRetryDelay(attempt, random),
          'The default retry delay (is createRuntime({ random }) returning a number in [0, 1)?)',
        )
      }
      if (typeof delay === 'number') return delay
      return validateMs(delay(attempt, error), 'retry.delay(attempt, error)')
    },
    shouldRetry(error, attempt) {
      if (attempt >= attempts || isCancelledError(error)) return false
      return retryIf === undefined ? true : retryIf(error, attempt) === true
    },
  }
}

/**
 * How long to wait before the next attempt after `error`, or `undefined`
 * when the task must end with it (no attempts left, not retryable).
 * Throws when the policy itself is broken.
 */
export function retryDelay(task: TaskRecord, error: unknown): number | undefined {
  const retry = task.options.retry
  if (retry === undefined || !retry.shouldRetry(error, task.attempt)) return undefined
  return retry.delayFor(task.attempt, error, task.core.random)
}

/** `running → parked:retry` for `delay` ms, then the task runs the pipeline again from the queue. */
export function parkForRetry(task: TaskRecord, delay: number, error: unknown): void {
  task.moveTo('parked:retry', { error })
  const core = task.core
  if (core.bus.active) {
    core.bus.emit({ type: 'task:retry', taskId: task.id, attempt: task.attempt, delay, error })
  }
  const extras = extrasOf(task)
  extras.stageTimer = core.clock.setTimeout(() => {
    extras.stageTimer = undefined
    // Two attempts of one task never overlap: a timed-out body still inside
    // keeps the next attempt waiting until it leaves.
    core.bodies.whenNoStaleBody(task, () => core.resume(task, 'retry-due'))
  }, delay)
}
