import type { Attributes } from '@opentelemetry/api'
import { isTimeoutError } from '@vega/job-core'

/**
 * `error.type` as the semantic conventions want it: `timeout` for the
 * runtime's `TimeoutError`, else the error's `name`, else `_OTHER` (a thrown
 * string or plain object has no type worth a cardinality).
 */
export function errorType(error: unknown): string {
  if (isTimeoutError(error)) return 'timeout'
  if (error instanceof Error) return error.name
  if (typeof error === 'object' && error !== null) {
    const name = (error as { name?: unknown }).name
    if (typeof name === 'string' && name !== '') return name
  }
  return '_OTHER'
}

/** The status description of a failed span: the error's message, or the thrown value as text. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message
  if (typeof error === 'object' && error !== null) {
    const message = (error as { message?: unknown }).message
    if (typeof message === 'string') return message
  }
  return String(error)
}

/**
 * The attributes of an `exception` span event (semantic conventions'
 * `exception.*`). `exception.type` is the error's class name, also for a
 * `TimeoutError` (whose `error.type` is `timeout`).
 */
export function exceptionAttributes(error: unknown): Attributes {
  const attributes: Attributes = {
    'exception.type': error instanceof Error ? error.name : errorType(error),
    'exception.message': errorMessage(error),
  }
  if (error instanceof Error && typeof error.stack === 'string') {
    attributes['exception.stacktrace'] = error.stack
  }
  return attributes
}

/** How a value reads in an error message about a bad option. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null'
  if (typeof value === 'string') return `'${value}'`
  if (typeof value === 'function') return 'a function'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object'
  return String(value)
}
