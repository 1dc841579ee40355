import { assertKnownKeys } from './assert-known-keys.js'
import {
  bindingOf,
  JOB_BINDINGS,
  layerFor,
  rawOf,
  readBindings,
  TaskBindings,
  withLayers,
} from './internal/bindings.js'
import { describeValue } from './internal/validate.js'
import type { BackendJob } from './types/backend.js'
import type { TaskTag } from './types/plugin.js'
import type { TaskFn } from './types/task.js'

const TAG_OPTION_KEYS: readonly string[] = ['key', 'sharedBindings']

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
  if (options === null || typeof options !== 'object') {
    throw new TypeError(
      `createTaskTag(plugin, options): options must be an object such as { key }, got ${describeValue(options)}.`,
    )
  }
  assertKnownKeys('createTaskTag(plugin, options)', options, TAG_OPTION_KEYS)
  const { key, sharedBindings = false } = options
  if (key !== undefined && typeof key !== 'function') {
    throw new TypeError(
      `createTaskTag(plugin, { key }): key must be a function (binding) => string | undefined, got ${describeValue(key)}.`,
    )
  }
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
  const inner = withoutTag(previous, tag as TaskTag<unknown>, raw as TaskFn<unknown>)
  return withLayers(
    raw,
    inner === undefined
      ? layerFor(raw as TaskFn<unknown>, tag as TaskTag<unknown>, binding)
      : new TaskBindings(raw as TaskFn<unknown>, tag as TaskTag<unknown>, binding, inner),
  )
}

/**
 * Reads the binding `tag` put on a taskFn, or `undefined`. Given a
 * {@link BackendJob}, reads the tags of its task: from a job of this
 * runtime's kernel without building anything (prefer it in a backend, over
 * `job.taskFn`, which a tagged task rebuilds on each read), from any other
 * job through its `taskFn`. Anything else is a `TypeError`.
 *
 * @example
 * ```ts
 * const binding = readTaskTag(job, routeTag) // { queue: 'mail' } | undefined
 * const same = readTaskTag(job.taskFn, routeTag)
 * ```
 */
export function readTaskTag<B>(
  target: TaskFn<unknown> | BackendJob,
  tag: TaskTag<B>,
): B | undefined {
  if (typeof target === 'function') return bindingOf(readBindings(target), tag)
  if (target !== null && typeof target === 'object') {
    // A job of this kernel: its layers, without rebuilding its taskFn.
    if (JOB_BINDINGS in target) {
      return bindingOf(
        (target as { readonly [JOB_BINDINGS]: TaskBindings | undefined })[JOB_BINDINGS],
        tag,
      )
    }
    if (typeof target.taskFn === 'function') return bindingOf(readBindings(target.taskFn), tag)
  }
  throw new TypeError(
    `readTaskTag(target, tag): target must be a taskFn or a backend's job (with a taskFn), got ${target === null ? 'null' : typeof target}.`,
  )
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
