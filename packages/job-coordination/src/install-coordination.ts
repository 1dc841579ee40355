import type { Plugin } from '@vega/job-core'
import { dispatchToCoordinator } from './internal/coordination-context.js'
import { coordinationTag } from './internal/coordination-tag.js'
import { createScope } from './internal/scope.js'

/**
 * The coordination plugin. Install it in every runtime that runs taskFns
 * bound with `withCoordinator`; without it, such calls end `error` with a
 * `PluginMissingError` naming `installCoordination` (they never run
 * uncoordinated). Each runtime gets its own peer index and per-key state.
 *
 * @example
 * ```ts
 * const runtime = createRuntime({ plugins: [installCoordination] })
 * const save = withCoordinator(saveDoc, serialize.coordinator, { key: ['doc', id] })
 * await run(runtime, save)
 * ```
 */
export const installCoordination: Plugin = Object.freeze({
  name: 'installCoordination',
  install(host) {
    const scope = createScope(host)
    host.claim(coordinationTag, (request) => dispatchToCoordinator(scope, request), {
      // A call its coordinator merges into a live peer ends before the kernel
      // builds its task (when nobody listens: no events to tell the difference).
      followPeer: (binding) => binding.strategy?.follow?.(scope, binding),
      followReason: 'dedupe',
      // Told of every call the handler decided: the index and the lanes
      // register nothing per call.
      onSettled: (task, binding) => scope.settled(task, binding),
      onExited: (task, binding) => scope.exited(task, binding),
    })
  },
} satisfies Plugin)
