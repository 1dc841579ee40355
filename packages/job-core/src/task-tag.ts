import {
  BINDINGS,
  bindingOf,
  layerFor,
  RAW,
  rawOf,
  readBindings,
  TaskBindings,
} from './internal/bindings.js'
import type { TaskFn } from './task.js'

/**
 * A typed label that a plugin (or core's shapers) attaches to a taskFn,
 * carrying a binding such as a coordinator and its key. A taskFn that carries
 * a tag nobody claimed is refused by the kernel's loud-fail guard.
 *
 * @example
 * ```ts
 * const routeTag = createTaskTag<{ queue: string }>('installRouting', { key: (b) => b.queue })
 * ```
 */
export interface TaskTag<B> {
  /** The name of the plugin value that must be installed to claim this tag (used in error messages). */
  readonly plugin: string
  /** Derives the task's key (shown in `task:created` and devtools) from a binding. */
  readonly key: ((binding: B) => string | undefined) | undefined
  /**
   * Bindings of this tag are values reused across many taskFns (a plugin
   * keeps one per key): core then keeps one record of each binding object,
   * weakly, for every taskFn that carries it as its only tag, instead of one
   * per taskFn. Set with `createTaskTag(plugin, { sharedBindings: true })`.
   */
  readonly sharedBindings?: boolean
  /** Phantom field carrying the binding type. */
  readonly __binding?: B
}

/**
 * Creates a tag. `plugin` names the plugin value that claims it, so the
 * loud-fail guard can say what to install. `key` derives the task's key from
 * a binding. `sharedBindings: true` says the plugin reuses binding objects
 * across calls (as `withAggregate` keeps one frozen binding per aggregate
 * id): tagging then costs a taskFn no record of its own for the binding.
 *
 * @example
 * ```ts
 * const tag = createTaskTag<{ key: string }>('installMyPlugin', { key: (b) => b.key })
 * const routeTag = createTaskTag<Route>('installRouting', { sharedBindings: true })
 * ```
 */
export function createTaskTag<B>(
  plugin: string,
  options: {
    key?: ((binding: B) => string | undefined) | undefined
    sharedBindings?: boolean | undefined
  } = {},
): TaskTag<B> {
  if (typeof plugin !== 'string' || plugin === '') {
    throw new TypeError(
      'createTaskTag(plugin): plugin must be the non-empty name of the plugin value.',
    )
  }
  const { key, sharedBindings = false } = options
  if (typeof sharedBindings !== 'boolean') {
    throw new TypeError(
      `createTaskTag(plugin, options): options.sharedBindings must be a boolean, got ${typeof sharedBindings}.`,
    )
  }
  return Object.freeze({ plugin, key, sharedBindings })
}

/**
 * Returns a new taskFn that runs `taskFn` and carries `binding` under `tag`
 * (replacing an earlier binding of the same tag). The original is untouched.
 * For a tag made with `sharedBindings: true`, every taskFn that carries
 * one binding object as its only tag shares one record of it, so tagging
 * costs a taskFn nothing but the new function.
 *
 * @example
 * ```ts
 * const routed = tagTaskFn(sendEmail, routeTag, { queue: 'mail' })
 * ```
 */
export function tagTaskFn<T, B>(
  taskFn: TaskFn<T>,
  tag: TaskTag<B>,
  binding: NoInfer<B>,
): TaskFn<T> {
  if (typeof taskFn !== 'function') {
    throw new TypeError(`Expected a task function to bind for ${tag.plugin}, got ${typeof taskFn}.`)
  }
  const previous = readBindings(taskFn)
  const raw = rawOf(taskFn) as TaskFn<T>
  // A bound function, not `(ctx) => raw(ctx)`: that closure would keep a
  // context for `raw` (40 B per bound call; a bind per message is the
  // aggregate path's way of binding).
  const tagged = raw.bind(undefined) as TaskFn<T> & {
    [BINDINGS]?: TaskBindings
    [RAW]?: TaskFn<T>
  }
  const inner = withoutTag(previous, tag as TaskTag<unknown>, raw as TaskFn<unknown>)
  // Assignments, not defineProperty: a tenth of the cost on a path bound
  // once per call. The symbols are not for users; the properties only live
  // on the function made here, both in the one backing store the first
  // of them makes the engine allocate (it has room for three).
  tagged[BINDINGS] =
    inner === undefined
      ? layerFor(raw as TaskFn<unknown>, tag as TaskTag<unknown>, binding)
      : new TaskBindings(raw as TaskFn<unknown>, tag as TaskTag<unknown>, binding, inner)
  tagged[RAW] = raw
  return tagged
}

/**
 * Reads the binding `tag` put on `taskFn`, or `undefined`.
 *
 * @example
 * ```ts
 * const binding = readTaskTag(job.taskFn, routeTag) // { queue: 'mail' } | undefined
 * ```
 */
export function readTaskTag<B>(taskFn: TaskFn<unknown>, tag: TaskTag<B>): B | undefined {
  return bindingOf(readBindings(taskFn), tag)
}

/** `layers` without `tag` (a rebinding replaces it), sharing what needs no copy. */
function withoutTag(
  layers: TaskBindings | undefined,
  tag: TaskTag<unknown>,
  raw: TaskFn<unknown>,
): TaskBindings | undefined {
  if (layers === undefined || !hasTag(layers, tag)) return layers
  if (layers.tag === tag) return layers.inner
  return new TaskBindings(raw, layers.tag, layers.binding, withoutTag(layers.inner, tag, raw))
}

function hasTag(layers: TaskBindings | undefined, tag: TaskTag<unknown>): boolean {
  for (let layer = layers; layer !== undefined; layer = layer.inner)
    if (layer.tag === tag) return true
  return false
}
