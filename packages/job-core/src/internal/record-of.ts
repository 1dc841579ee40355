import { followedRecord } from './followed-call.js'
import type { TaskRecord } from './model.js'
import { handleRecord } from './task-handle.js'

/**
 * The record behind a task returned by `run()`, or `undefined` for anything
 * else (a brand check). A call merged before it was built gets its ended
 * record made here, the first time anyone needs it.
 */
export function recordOf(value: unknown): TaskRecord | undefined {
  if (value === null || typeof value !== 'object') return undefined
  return handleRecord(value) ?? followedRecord(value)
}
