import { assertKnownKeys, type Key, type TaskFn, tagTaskFn } from '@vega/job-core'
import { isCoordinator } from './define-coordinator.js'
import {
  bindingFor,
  type CoordinationBinding,
  coordinationTag,
} from './internal/coordination-tag.js'
import { describeValue } from './internal/describe-value.js'
import type { Coordinator } from './types.js'

const BINDING_KEYS: readonly string[] = ['key']

/**
 * Binds a coordinator and a key to a taskFn. `run()` then hands every call
 * of the returned taskFn to the coordinator before anything runs. The key is
 * the call's identity: calls whose keys hash the same are peers, whatever
 * their taskFn, so namespace keys (`['doc', id]`, not `id`).
 *
 * Everything is checked here, at bind time, not at `run()`: a `TypeError`
 * for a non-function taskFn, a value that is not a coordinator, a missing
 * key, an unknown binding field (`{ kye }`), or an unhashable key (function, symbol, class instance, cycle).
 * The runtime must have `installCoordination` in its plugins; otherwise every
 * such call ends `error` with a `PluginMissingError` naming it.
 *
 * @example
 * ```ts
 * const runtime = createRuntime({ plugins: [installCoordination] })
 * const loadUser = withCoordinator(fetchUser, dedupeCoordinator, { key: ['user', 42] })
 * const [a, b] = await Promise.all([run(runtime, loadUser), run(runtime, loadUser)]) // one request
 * ```
 */
export function withCoordinator<T>(
  taskFn: TaskFn<T>,
  coordinator: Coordinator,
  binding: { key: Key },
): TaskFn<T> {
  if (typeof taskFn !== 'function') {
    throw new TypeError(
      `withCoordinator(taskFn, …): taskFn must be a function (ctx) => …, got ${describeValue(taskFn)}.`,
    )
  }
  if (!isCoordinator(coordinator)) {
    throw new TypeError(
      `withCoordinator(…, coordinator, …): expected a coordinator, got ${describeValue(coordinator)}. Use a built-in (dedupeCoordinator, restartCoordinator, …) or make one with defineCoordinator(name, impl).`,
    )
  }
  if (binding === null || typeof binding !== 'object') {
    throw new TypeError(
      `withCoordinator(…, ${coordinator.name}, { key }): a key is required, e.g. { key: ['doc', id] }; it is what makes two calls "the same".`,
    )
  }
  // Before the key's own check, so a misspelt key (`{ kye }`) is named with a
  // suggestion rather than reported missing. Bound once per call on hot paths:
  // the message (with the coordinator's name) is built only for a stray field.
  for (const field in binding) {
    if (field !== 'key') {
      assertKnownKeys(
        `withCoordinator(taskFn, ${coordinator.name}, binding)`,
        binding,
        BINDING_KEYS,
      )
    }
  }
  if (binding.key === undefined) {
    throw new TypeError(
      `withCoordinator(…, ${coordinator.name}, { key }): a key is required, e.g. { key: ['doc', id] }; it is what makes two calls "the same".`,
    )
  }
  let shared: CoordinationBinding
  try {
    shared = bindingFor(coordinator, binding.key)
  } catch (error) {
    throw new TypeError(
      `withCoordinator(…, ${coordinator.name}, { key }): ${(error as Error).message}`,
      { cause: error },
    )
  }
  return tagTaskFn(taskFn, coordinationTag, shared)
}
