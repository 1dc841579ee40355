import type { RuntimeOptions, UnobservedErrorHandler } from '../types/runtime.js'
import type { ResolvedControl, ResolvedDefaults, ResolvedRateLimit } from './model.js'
import { resolveRetry } from './retry.js'
import { resolveTimeouts } from './run-options.js'
import { nestedOptionName, validateMs } from './validate.js'

const DEFAULT_KEYS = new Set(['timeout', 'retry', 'priority'])

/** Checks every runtime-control option; errors name the option and echo the value. */
export function resolveControl(
  options: RuntimeOptions,
  reportUnobserved: UnobservedErrorHandler,
): ResolvedControl {
  const { maxQueued, overflow, abandonAfter, onUnobservedError } = options
  if (
    maxQueued !== undefined &&
    (typeof maxQueued !== 'number' ||
      !(Number.isInteger(maxQueued) || maxQueued === Number.POSITIVE_INFINITY) ||
      maxQueued < 0)
  ) {
    throw new RangeError(
      `createRuntime({ maxQueued }): maxQueued must be an integer ≥ 0 or Infinity, got ${show(maxQueued)}. ` +
        'Use 0 to run only what finds a free slot at once.',
    )
  }
  if (overflow !== undefined && overflow !== 'reject-new' && overflow !== 'drop-oldest') {
    throw new TypeError(
      `createRuntime({ overflow }): overflow must be 'reject-new' or 'drop-oldest', got ${show(overflow)}.`,
    )
  }
  if (overflow !== undefined && maxQueued === undefined) {
    throw new TypeError(
      `createRuntime({ overflow: ${show(overflow)} }): overflow applies only with maxQueued; pass maxQueued too, e.g. { maxQueued: 100, overflow: ${show(overflow)} }.`,
    )
  }
  let abandon = Number.POSITIVE_INFINITY
  if (abandonAfter !== undefined && abandonAfter !== Number.POSITIVE_INFINITY) {
    abandon = validateMs(abandonAfter, 'createRuntime({ abandonAfter })')
  }
  let report: UnobservedErrorHandler | undefined = reportUnobserved
  if (onUnobservedError === false) report = undefined
  else if (typeof onUnobservedError === 'function') report = onUnobservedError
  else if (onUnobservedError !== undefined) {
    throw new TypeError(
      `createRuntime({ onUnobservedError }): onUnobservedError must be a function (error, task) => void or false, got ${show(onUnobservedError)}.`,
    )
  }
  return {
    defaults: resolveDefaults(options.defaults),
    rateLimit: resolveRateLimit(options.rateLimit),
    maxQueued: maxQueued ?? Number.POSITIVE_INFINITY,
    overflow: overflow ?? 'reject-new',
    abandonAfter: abandon,
    onUnobservedError: report,
  }
}

function resolveDefaults(defaults: RuntimeOptions['defaults']): ResolvedDefaults | undefined {
  if (defaults === undefined) return undefined
  if (defaults === null || typeof defaults !== 'object') {
    throw new TypeError(
      `createRuntime({ defaults }): defaults must be an object like { timeout, retry, priority }, got ${show(defaults)}.`,
    )
  }
  for (const key of Object.keys(defaults)) {
    if (!DEFAULT_KEYS.has(key)) {
      throw new TypeError(
        `createRuntime({ defaults }): unknown default ${show(key)}; defaults takes timeout, retry and priority.`,
      )
    }
  }
  const { timeout, retry, priority } = defaults
  if (priority !== undefined && (typeof priority !== 'number' || !Number.isFinite(priority))) {
    throw new TypeError(
      `createRuntime({ defaults: { priority } }): priority must be a finite number, got ${show(priority)}.`,
    )
  }
  return {
    priority,
    timeouts:
      timeout === undefined
        ? undefined
        : resolveTimeouts(timeout, nestedOptionName(inDefaults, 'timeout')),
    retry: resolveRetry(retry, nestedOptionName(inDefaults, 'retry')),
  }
}

function resolveRateLimit(rateLimit: RuntimeOptions['rateLimit']): ResolvedRateLimit | undefined {
  if (rateLimit === undefined) return undefined
  if (rateLimit === null || typeof rateLimit !== 'object') {
    throw new TypeError(
      `createRuntime({ rateLimit }): rateLimit must be { limit, interval, window? }, got ${show(rateLimit)}.`,
    )
  }
  const { limit, interval, window } = rateLimit
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
    throw new RangeError(
      `createRuntime({ rateLimit: { limit } }): limit must be an integer ≥ 1 (starts per interval), got ${show(limit)}.`,
    )
  }
  if (typeof interval !== 'number' || !Number.isFinite(interval) || interval <= 0) {
    throw new RangeError(
      `createRuntime({ rateLimit: { interval } }): interval must be a finite number of milliseconds > 0, got ${show(interval)}.`,
    )
  }
  if (window !== undefined && window !== 'fixed' && window !== 'sliding') {
    throw new TypeError(
      `createRuntime({ rateLimit: { window } }): window must be 'fixed' or 'sliding', got ${show(window)}.`,
    )
  }
  return { limit, interval, window: window ?? 'sliding' }
}

/** A value as an error message shows it: strings quoted. */
export function show(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`
  if (typeof value === 'function') return 'a function'
  if (value === null) return 'null'
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object'
  return String(value)
}

const inDefaults = (inner: string): string => `createRuntime({ defaults: { ${inner} } })`
