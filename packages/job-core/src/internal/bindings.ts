import type { TaskFn } from '../task.js'
import type { TaskTag } from '../task-tag.js'

/** One tag on a taskFn and what it was bound with. */
export interface TagEntry {
  readonly tag: TaskTag<unknown>
  readonly binding: unknown
}

/**
 * What a tagged taskFn carries: one layer per tag, outermost first, each
 * holding the undecorated function. Coordinators and the scheduler bind once
 * per call, so a tag costs one object here — no entry object and no array
 * (80 B less per tagged call than a `{ raw, entries: [{ tag, binding }] }`).
 */
export class TaskBindings implements TagEntry {
  readonly raw: TaskFn<unknown>
  readonly tag: TaskTag<unknown>
  readonly binding: unknown
  /** The tags bound before this one, or `undefined`. */
  readonly inner: TaskBindings | undefined

  constructor(
    raw: TaskFn<unknown>,
    tag: TaskTag<unknown>,
    binding: unknown,
    inner: TaskBindings | undefined,
  ) {
    this.raw = raw
    this.tag = tag
    this.binding = binding
    this.inner = inner
  }

  /**
   * The tags innermost first: the shape copies of core before 1.1 read
   * (the symbol below is shared between copies), built only when read.
   */
  get entries(): readonly TagEntry[] {
    const entries: TagEntry[] = []
    for (let layer: TaskBindings | undefined = this; layer !== undefined; layer = layer.inner) {
      entries.push({ tag: layer.tag, binding: layer.binding })
    }
    return entries.reverse()
  }
}

// Symbol.for: tags written by one copy of core stay readable by another.
export const BINDINGS: unique symbol = Symbol.for('@vega/job-core/bindings') as never

/** The shape an older copy of core writes. */
interface EntriesShape {
  readonly raw: TaskFn<unknown>
  readonly entries: readonly TagEntry[]
}

/** The tags a taskFn carries, outermost first, or `undefined` for a plain function. */
export function readBindings(taskFn: TaskFn<unknown>): TaskBindings | undefined {
  const value = (taskFn as { [BINDINGS]?: TaskBindings | EntriesShape })[BINDINGS]
  if (value === undefined || 'tag' in value) return value
  // Written by an older copy of core: rebuilt as layers (rare, and never on this copy's own tags).
  let layers: TaskBindings | undefined
  for (const entry of value.entries)
    layers = new TaskBindings(value.raw, entry.tag, entry.binding, layers)
  return layers
}

/** The binding of `tag` among `layers`, or `undefined`. */
export function bindingOf<B>(layers: TaskBindings | undefined, tag: TaskTag<B>): B | undefined {
  for (let layer = layers; layer !== undefined; layer = layer.inner) {
    if (layer.tag === (tag as TaskTag<unknown>)) return layer.binding as B
  }
  return undefined
}
