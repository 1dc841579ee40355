import type { TaskTag } from '../types/plugin.js'
import type { TaskFn } from '../types/task.js'

/** One tag on a taskFn and what it was bound with. */
export interface TagEntry {
  readonly tag: TaskTag<unknown>
  readonly binding: unknown
}

/**
 * What a tagged taskFn carries: one layer per tag, outermost first.
 * Coordinators and the scheduler bind once per call, so a tag costs at most
 * one object here — no entry object and no array — and none when the layer
 * is shared (see {@link layerFor}).
 */
export class TaskBindings implements TagEntry {
  /**
   * The undecorated function, on a layer made for one taskFn (older copies
   * of core read it there). A shared layer serves many taskFns and has none:
   * each taskFn then keeps its own under {@link RAW}; {@link rawOf} reads both.
   */
  readonly raw: TaskFn<unknown> | undefined
  readonly tag: TaskTag<unknown>
  readonly binding: unknown
  /** The tags bound before this one, or `undefined`. */
  readonly inner: TaskBindings | undefined

  constructor(
    raw: TaskFn<unknown> | undefined,
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
/**
 * The undecorated function of a tagged taskFn. It shares the property
 * backing store the engine allocates for BINDINGS (room for three
 * properties), so it costs no memory; the layers can then be shared.
 */
export const RAW: unique symbol = Symbol.for('@vega/job-core/raw') as never

/**
 * The layers of a task, on the jobs this copy of core hands a backend (a
 * record, a retry ticket): `readTaskTag(job, tag)` reads them there without
 * rebuilding the job's `taskFn`. Local to this copy: a job from another
 * copy is read through its `taskFn`.
 */
export const JOB_BINDINGS: unique symbol = Symbol('@vega/job-core/job-bindings') as never

/** The shape an older copy of core writes. */
interface EntriesShape {
  readonly raw: TaskFn<unknown>
  readonly entries: readonly TagEntry[]
}

type Tagged = TaskFn<unknown> & {
  [BINDINGS]?: TaskBindings | EntriesShape
  [RAW]?: TaskFn<unknown>
}

/** The tags a taskFn carries, outermost first, or `undefined` for a plain function. */
export function readBindings(taskFn: TaskFn<unknown>): TaskBindings | undefined {
  const value = (taskFn as Tagged)[BINDINGS]
  if (value === undefined || 'tag' in value) return value
  // Written by an older copy of core: rebuilt as layers (rare, and never on this copy's own tags).
  let layers: TaskBindings | undefined
  for (const entry of value.entries)
    layers = new TaskBindings(value.raw, entry.tag, entry.binding, layers)
  return layers
}

/**
 * The function a tagged taskFn decorates (what its body runs), or `taskFn`
 * itself when it carries no tag. A taskFn tagged by an older copy of core
 * keeps it on its layers.
 */
export function rawOf(taskFn: TaskFn<unknown>): TaskFn<unknown> {
  const raw = (taskFn as Tagged)[RAW]
  if (raw !== undefined) return raw
  const value = (taskFn as Tagged)[BINDINGS]
  return value?.raw ?? taskFn
}

/** The function a task runs for `taskFn`, given its layers (`readBindings(taskFn)`). */
export function bodyOf(
  taskFn: TaskFn<unknown>,
  bindings: TaskBindings | undefined,
): TaskFn<unknown> {
  return bindings === undefined ? taskFn : rawOf(taskFn)
}

/**
 * A taskFn that runs `raw` and carries `layers`: what `tagTaskFn` returns,
 * and what a task hands out as its `taskFn` (a task keeps only its body and
 * layers, so the function a waiting task was run with can be collected).
 */
export function withLayers<T>(raw: TaskFn<T>, layers: TaskBindings): TaskFn<T> {
  // A bound function, not `(ctx) => raw(ctx)`: that closure would keep a
  // context for `raw` on every bound call (a bind per message is the
  // aggregate path's way of binding; bench/README.md has the figures).
  const tagged = raw.bind(undefined) as TaskFn<T> & Tagged
  // Assignments, not defineProperty: a tenth of the cost on a path bound
  // once per call. The symbols are not for users; both properties live in
  // the one backing store the first of them makes the engine allocate
  // (it has room for three).
  tagged[BINDINGS] = layers
  tagged[RAW] = raw as TaskFn<unknown>
  return tagged
}

/** The binding of `tag` among `layers`, or `undefined`. */
export function bindingOf<B>(layers: TaskBindings | undefined, tag: TaskTag<B>): B | undefined {
  for (let layer = layers; layer !== undefined; layer = layer.inner) {
    if (layer.tag === (tag as TaskTag<unknown>)) return layer.binding as B
  }
  return undefined
}

/**
 * Layers shared by every taskFn that carries one binding object of a
 * `sharedBindings` tag and no other tag, by binding. Weak: a layer lives as
 * long as its binding does.
 */
const shared = new WeakMap<object, TaskBindings>()

/**
 * The only layer of a taskFn tagged with `binding` under `tag`: made once
 * per binding object and shared when the tag says its plugin reuses
 * bindings (a cache would only grow on the fresh binding most calls of
 * other tags make), else the taskFn's own.
 */
export function layerFor(
  raw: TaskFn<unknown>,
  tag: TaskTag<unknown>,
  binding: unknown,
): TaskBindings {
  if (tag.sharedBindings !== true || typeof binding !== 'object' || binding === null) {
    return new TaskBindings(raw, tag, binding, undefined)
  }
  const known = shared.get(binding)
  if (known !== undefined && known.tag === tag) return known
  // One binding object under two sharing tags (rare): the last one keeps the slot.
  const layer = new TaskBindings(undefined, tag, binding, undefined)
  shared.set(binding, layer)
  return layer
}
