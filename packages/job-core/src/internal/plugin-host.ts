import { assertKnownKeys } from '../assert-known-keys.js'
import { IllegalStateError } from '../errors.js'
import type { ClaimOptions, DispatchHandler, Plugin, PluginHost, TaskTag } from '../types/plugin.js'
import type { CancelReason, Task } from '../types/task.js'
import { checkBackend } from './backend-seam.js'
import type { Claim, RuntimeCore, TaskRecord } from './model.js'
import { recordOf } from './record-of.js'
import { onExited, onSettled } from './task-callbacks.js'
import { describeValue } from './validate.js'

/** Installs `plugin` into `core` through the public seams of a {@link PluginHost}. */
export function installPlugin(core: RuntimeCore, plugin: Plugin, index: number): void {
  if (plugin === null || typeof plugin !== 'object' || typeof plugin.install !== 'function') {
    throw new TypeError(
      `createRuntime({ plugins }): plugins[${index}] is not a plugin, got ${describeValue(plugin)}; a plugin is { name, install(host) }.`,
    )
  }
  const name: unknown = plugin.name
  if (typeof name !== 'string' || name === '') {
    throw new TypeError(
      `createRuntime({ plugins }): plugins[${index}] needs a name, a non-empty string (it names the plugin in errors and in the tags it claims), got ${describeValue(name)}.`,
    )
  }
  if (core.disposers.some((d) => d.name === name)) {
    throw new IllegalStateError(`Plugin ${name} is installed twice in runtime ${core.name}.`)
  }
  let installing = true
  const recordIn = (task: Task<unknown>, method: string): TaskRecord => {
    const record = recordOf(task)
    if (record === undefined || record.core !== core) {
      throw new TypeError(
        `host.${method}(task, callback) in plugin ${name}: expected a task created by run() on this runtime, got ${describeValue(task)}.`,
      )
    }
    return record
  }
  const host: PluginHost = {
    runtime: core.handle,
    clock: core.clock,
    events: core.publicBus,
    claim: (tag, handler, options) => {
      if (!isTaskTag(tag)) {
        throw new TypeError(
          `host.claim(tag, handler) in plugin ${name}: tag must be a TaskTag made by createTaskTag(plugin), got ${describeValue(tag)}.`,
        )
      }
      if (handler !== undefined && typeof handler !== 'function') {
        throw new TypeError(
          `host.claim(tag, handler) for ${tag.plugin}: handler must be a function (request) => void, or left out, got ${describeValue(handler)}.`,
        )
      }
      if (core.claims.has(tag as TaskTag<unknown>)) {
        throw new IllegalStateError(
          `The tag of ${tag.plugin} is already claimed in runtime ${core.name}.`,
        )
      }
      const { followPeer, followReason, onSettled, onExited } = claimOptions(options, tag.plugin)
      // Each of these acts on the handler's decisions: without a handler there are none.
      const needsHandler =
        followPeer !== undefined
          ? 'followPeer'
          : onSettled !== undefined
            ? 'onSettled'
            : onExited !== undefined
              ? 'onExited'
              : undefined
      if (handler === undefined && needsHandler !== undefined) {
        const why =
          needsHandler === 'followPeer'
            ? "followPeer is a shortcut of the handler's own decision"
            : `${needsHandler} is told of the tasks the handler decides`
        throw new TypeError(
          `host.claim(tag, handler, { ${needsHandler} }) for ${tag.plugin}: ${why}; pass the handler too.`,
        )
      }
      core.claims.set(tag as TaskTag<unknown>, {
        plugin: name,
        tag: tag as TaskTag<unknown>,
        handler: handler as DispatchHandler<unknown> | undefined,
        followPeer: followPeer as ((binding: unknown) => Task<unknown> | undefined) | undefined,
        followReason,
        onSettled: onSettled as Claim['onSettled'],
        onExited: onExited as Claim['onExited'],
      })
      if (followPeer !== undefined) core.followers++
    },
    onPreCancel: (hook) => core.backend.onPreCancel(callable(hook, 'onPreCancel(hook)', name)),
    useBackend: (wrap) => {
      if (!installing) {
        throw new IllegalStateError('host.useBackend may only be called during install().')
      }
      callable(wrap, 'useBackend(wrap)', name)
      core.backend = checkBackend(
        wrap(core.backend),
        `host.useBackend(wrap) in plugin ${name}: wrap returned no backend`,
      )
    },
    liveTasks: () => liveHandles(core),
    owns: (task) => recordOf(task)?.core === core,
    onSettled: (task, callback) =>
      onSettled(recordIn(task, 'onSettled'), callable(callback, 'onSettled(task, callback)', name)),
    onExited: (task, callback) =>
      onExited(recordIn(task, 'onExited'), callable(callback, 'onExited(task, callback)', name)),
    onShutdown: (listener) => {
      callable(listener, 'onShutdown(listener)', name)
      core.shutdownListeners.push(listener)
      return () => {
        const index = core.shutdownListeners.indexOf(listener)
        if (index !== -1) core.shutdownListeners.splice(index, 1)
      }
    },
  }
  let dispose: unknown
  try {
    dispose = plugin.install(Object.freeze(host))
  } catch (error) {
    const said = error instanceof Error ? error.message : describeValue(error)
    // The same kind of error as the plugin's, for the usual ones: a plugin
    // refusing its options still makes createRuntime throw a TypeError.
    const Kind =
      error instanceof TypeError
        ? TypeError
        : error instanceof RangeError
          ? RangeError
          : error instanceof IllegalStateError
            ? IllegalStateError
            : Error
    throw new Kind(
      `createRuntime({ plugins }): plugin ${name} threw from install(host), so the runtime was not created: ${said}`,
      { cause: error },
    )
  } finally {
    installing = false
  }
  core.disposers.push({
    name,
    dispose: typeof dispose === 'function' ? (dispose as () => void | PromiseLike<void>) : () => {},
  })
}

/** A function a plugin hands the host, checked when it is handed, not when the kernel calls it. */
function callable<F>(value: F, call: string, plugin: string): F {
  if (typeof value === 'function') return value
  throw new TypeError(
    `host.${call} in plugin ${plugin}: expected a function, got ${describeValue(value)}.`,
  )
}

/** A value shaped like a `TaskTag` (of this copy of the package or another). */
function isTaskTag(value: unknown): value is TaskTag<unknown> {
  if (value === null || typeof value !== 'object') return false
  const { plugin, key } = value as { plugin?: unknown; key?: unknown }
  return (
    typeof plugin === 'string' && plugin !== '' && (key === undefined || typeof key === 'function')
  )
}

function* liveHandles(core: RuntimeCore): IterableIterator<Task<unknown>> {
  for (const task of core.live.values()) yield task.handle
}

/** `host.claim`'s options, checked when the plugin installs. */
function claimOptions<B>(
  options: ClaimOptions<B> | undefined,
  plugin: string,
): {
  followPeer: ClaimOptions<B>['followPeer']
  followReason: CancelReason
  onSettled: ClaimOptions<B>['onSettled']
  onExited: ClaimOptions<B>['onExited']
} {
  if (options === undefined) {
    return {
      followPeer: undefined,
      followReason: 'dedupe',
      onSettled: undefined,
      onExited: undefined,
    }
  }
  if (options === null || typeof options !== 'object') {
    throw new TypeError(
      `host.claim(tag, handler, options) for ${plugin}: options must be an object such as { followPeer }, got ${describeValue(options)}.`,
    )
  }
  assertKnownKeys(`host.claim(tag, handler, options) for ${plugin}`, options, [
    'followPeer',
    'followReason',
    'onSettled',
    'onExited',
  ])
  const { followPeer, followReason = 'dedupe', onSettled, onExited } = options
  for (const [option, hook] of [
    ['onSettled', onSettled],
    ['onExited', onExited],
  ] as const) {
    if (hook !== undefined && typeof hook !== 'function') {
      throw new TypeError(
        `host.claim(tag, handler, { ${option} }) for ${plugin}: ${option} must be a function (task, binding) => void, got ${describeValue(hook)}.`,
      )
    }
  }
  if (followPeer !== undefined && typeof followPeer !== 'function') {
    throw new TypeError(
      `host.claim(tag, handler, { followPeer }) for ${plugin}: followPeer must be a function (binding) => peer | undefined, got ${describeValue(followPeer)}.`,
    )
  }
  if (typeof followReason !== 'string' || followReason === '') {
    throw new TypeError(
      `host.claim(tag, handler, { followReason }) for ${plugin}: followReason must be a non-empty cancel reason such as 'dedupe', got ${describeValue(followReason)}.`,
    )
  }
  return { followPeer, followReason, onSettled, onExited }
}
