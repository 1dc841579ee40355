import type { StatefulCoordinator } from '../types.js'
import { KeyLanes, type WaitPolicy } from './key-lanes.js'
import { resolveLaneOptions } from './lane-options.js'
import { defineStrategy } from './strategy.js'

/**
 * A per-key lane strategy (serialize, keepLatest) as the stateful
 * coordinator both factories return: `fn` is the factory the user called
 * (for messages), `example` a valid options object, `defaultName` the
 * coordinator's name when none is given, `policy` what a call does when its
 * key's lane is full.
 */
export function createLaneCoordinator(
  fn: string,
  options: { concurrency?: number | undefined; name?: string | undefined },
  example: string,
  defaultName: string,
  policy: WaitPolicy,
): StatefulCoordinator {
  const { concurrency, name } = resolveLaneOptions(fn, options, example, defaultName)
  const lanes = new KeyLanes(concurrency, policy)
  let disposed = false
  let self: StatefulCoordinator
  self = defineStrategy<StatefulCoordinator>(
    name,
    {
      decide: (scope, request) =>
        disposed ? lanes.refuse(request, 'shutdown') : lanes.decide(scope, request),
      exited: (scope, task, binding) => lanes.exited(scope, task, binding),
    },
    {
      dispose: {
        value: (): void => {
          if (disposed) return
          disposed = true
          lanes.skipAll('shutdown')
        },
      },
      resetAdmission: {
        value: (): void => {
          lanes.abandon()
        },
      },
      coordinator: { get: () => self },
    },
  )
  return self
}
