import { assertKnownKeys } from '../assert-known-keys.js'
import { IllegalStateError } from '../errors.js'
import type { ClaimOptions, DispatchHandler, Plugin, PluginHost, TaskTag } from '../types/plugin.js'
import type { CancelReason, Task } from '../types/task.js'
import type { RuntimeCore, TaskRecord } from './model.js'
import { recordOf } from './record-of.js'
import { onExited, onSettled } from './task-callbacks.js'
import { describeValue } from './validate.js'

/** Installs `plugin` into `core` through the public seams of a {@link PluginHost}. */
export function installPlugin(core: RuntimeCore, plugin: Plugin): void {
  if (plugin === null || typeof plugin !== 'object' || typeof plugin.install !== 'function') {
    throw new TypeError(
      `createRuntime({ plugins }): ${String(plugin)} is not a plugin; a plugin is { name, install(host) }.`,
    )
  }
  if (core.disposers.some((d) => d.name === plugin.name)) {
    throw new IllegalStateError(`Plugin ${plugin.name} is installed twice in runtime ${core.name}.`)
  }
  let installing = true
  const recordIn = (task: Task<unknown>): TaskRecord => {
    const record = recordOf(task)
    if (record === undefined || record.core !== core) {
      throw new TypeError('Expected a task created by run() on this runtime.')
    }
    return record
  }
  const host: PluginHost = {
    runtime: core.handle,
    clock: core.clock,
    events: core.publicBus,
    claim: (tag, handler, options) => {
      if (core.claims.has(tag as TaskTag<unknown>)) {
        throw new IllegalStateError(
          `The tag of ${tag.plugin} is already claimed in runtime ${core.name}.`,
        )
      }
      const { followPeer, followReason } = claimOptions(options, tag.plugin)
      if (followPeer !== undefined && handler === undefined) {
        throw new TypeError(
          `host.claim(tag, handler, { followPeer }) for ${tag.plugin}: followPeer is a shortcut of the handler's own decision; pass the handler too.`,
        )
      }
      core.claims.set(tag as TaskTag<unknown>, {
        plugin: plugin.name,
        handler: handler as DispatchHandler<unknown> | undefined,
        followPeer: followPeer as ((binding: unknown) => Task<unknown> | undefined) | undefined,
        followReason,
      })
      if (followPeer !== undefined) core.followers++
    },
    onPreCancel: (hook) => core.backend.onPreCancel(hook),
    useBackend: (wrap) => {
      if (!installing) {
        throw new IllegalStateError('host.useBackend may only be called during install().')
      }
      core.backend = wrap(core.backend)
    },
    liveTasks: () => liveHandles(core),
    owns: (task) => recordOf(task)?.core === core,
    onSettled: (task, callback) => onSettled(recordIn(task), callback),
    onExited: (task, callback) => onExited(recordIn(task), callback),
    onShutdown: (listener) => {
      core.shutdownListeners.push(listener)
      return () => {
        const index = core.shutdownListeners.indexOf(listener)
        if (index !== -1) core.shutdownListeners.splice(index, 1)
      }
    },
  }
  const dispose = plugin.install(host)
  installing = false
  core.disposers.push({
    name: plugin.name,
    dispose: typeof dispose === 'function' ? dispose : () => {},
  })
}

function* liveHandles(core: RuntimeCore): IterableIterator<Task<unknown>> {
  for (const task of core.live.values()) yield task.handle
}

/** `host.claim`'s options, checked when the plugin installs. */
function claimOptions<B>(
  options: ClaimOptions<B> | undefined,
  plugin: string,
): { followPeer: ClaimOptions<B>['followPeer']; followReason: CancelReason } {
  if (options === undefined) return { followPeer: undefined, followReason: 'dedupe' }
  if (options === null || typeof options !== 'object') {
    throw new TypeError(
      `host.claim(tag, handler, options) for ${plugin}: options must be an object such as { followPeer }, got ${describeValue(options)}.`,
    )
  }
  assertKnownKeys(`host.claim(tag, handler, options) for ${plugin}`, options, [
    'followPeer',
    'followReason',
  ])
  const { followPeer, followReason = 'dedupe' } = options
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
  return { followPeer, followReason }
}
