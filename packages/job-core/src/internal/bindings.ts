import type { TaskFn } from '../task.js'
import type { TaskTag } from '../task-tag.js'

interface TagEntry {
  readonly tag: TaskTag<unknown>
  readonly binding: unknown
}

/** What a tagged taskFn carries: the undecorated function and its tags, innermost first. */
export interface TaskBindings {
  readonly raw: TaskFn<unknown>
  readonly entries: readonly TagEntry[]
}

// Symbol.for: tags written by one copy of core stay readable by another.
export const BINDINGS: unique symbol = Symbol.for('@vega/job-core/bindings') as never

/** The tags a taskFn carries, or `undefined` for a plain function. */
export function readBindings(taskFn: TaskFn<unknown>): TaskBindings | undefined {
  return (taskFn as { [BINDINGS]?: TaskBindings })[BINDINGS]
}
