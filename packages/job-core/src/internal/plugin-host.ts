import { IllegalStateError } from '../errors.js'
import type { DispatchHandler, Plugin, PluginHost } from '../plugin.js'
import type { Task } from '../task.js'
import type { TaskTag } from '../task-tag.js'
import type { RuntimeCore } from './runtime-core.js'
import { onExited, onSettled } from './task-callbacks.js'
import { recordOf } from './task-handle.js'
import type { TaskRecord } from './task-record.js'

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
    runtime: core,
    clock: core.clock,
    events: core.bus,
    claim: (tag, handler) => {
      if (core.claims.has(tag as TaskTag<unknown>)) {
        throw new IllegalStateError(
          `The tag of ${tag.plugin} is already claimed in runtime ${core.name}.`,
        )
      }
      core.claims.set(tag as TaskTag<unknown>, {
        plugin: plugin.name,
        handler: handler as DispatchHandler<unknown> | undefined,
      })
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
