import { BINDINGS, bindingOf, readBindings, TaskBindings } from './internal/bindings.js'
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
  /** Phantom field carrying the binding type. */
  readonly __binding?: B
}

/**
 * Creates a tag. `plugin` names the plugin value that claims it, so the
 * loud-fail guard can say what to install.
 *
 * @example
 * ```ts
 * const tag = createTaskTag<{ key: string }>('installMyPlugin', { key: (b) => b.key })
 * ```
 */
export function createTaskTag<B>(
  plugin: string,
  options: { key?: (binding: B) => string | undefined } = {},
): TaskTag<B> {
  if (typeof plugin !== 'string' || plugin === '') {
    throw new TypeError(
      'createTaskTag(plugin): plugin must be the non-empty name of the plugin value.',
    )
  }
  return Object.freeze({ plugin, key: options.key })
}

/**
 * Returns a new taskFn that runs `taskFn` and carries `binding` under `tag`
 * (replacing an earlier binding of the same tag). The original is untouched.
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
  const raw = (previous?.raw ?? taskFn) as TaskFn<T>
  // A bound function, not `(ctx) => raw(ctx)`: that closure would keep a
  // context for `raw` (40 B per bound call; a bind per message is the
  // aggregate path's way of binding).
  const tagged = raw.bind(undefined) as TaskFn<T> & { [BINDINGS]?: TaskBindings }
  // An assignment, not defineProperty: a tenth of the cost on a path bound
  // once per call. The symbol is not for users; the property only lives on
  // the function made here.
  tagged[BINDINGS] = new TaskBindings(
    raw as TaskFn<unknown>,
    tag as TaskTag<unknown>,
    binding,
    withoutTag(previous, tag as TaskTag<unknown>),
  )
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
): TaskBindings | undefined {
  if (layers === undefined || !hasTag(layers, tag)) return layers
  if (layers.tag === tag) return layers.inner
  return new TaskBindings(layers.raw, layers.tag, layers.binding, withoutTag(layers.inner, tag))
}

function hasTag(layers: TaskBindings | undefined, tag: TaskTag<unknown>): boolean {
  for (let layer = layers; layer !== undefined; layer = layer.inner)
    if (layer.tag === tag) return true
  return false
}
