import { makeCoordinator } from '../define-coordinator.js'
import type { Coordinator } from '../types.js'
import { takeOver } from './coordination-context.js'
import { endingOf } from './ending.js'
import type { FastPath } from './fast-path.js'

/**
 * A built-in coordinator: its rule is `fastPath.decide`, written once on the
 * kernel's request. Bound directly, the adapter calls `decide` without a
 * context; delegated to (`(ctx) => serialize.coordinate(ctx)` inside a
 * coordinator of your own), it takes the intent over from the context and
 * runs the same `decide`. `test/fast-path.test.ts` holds every built-in to a
 * model written against the public protocol alone.
 */
export function builtinCoordinator<C extends Coordinator = Coordinator>(
  name: string,
  fastPath: FastPath,
  members?: PropertyDescriptorMap,
): C {
  return makeCoordinator<C>(
    name,
    (ctx) => {
      const { scope, request } = takeOver(ctx, name)
      // Ended while the delegating coordinator was still deciding: nothing to decide, only its ending to pass on.
      if (request.decided) return endingOf(request.task)
      // Its exit is this built-in's, not the bound coordinator's.
      if (fastPath.exited !== undefined) scope.delegate(request.task, fastPath)
      return fastPath.decide(scope, request)
    },
    fastPath,
    members,
  )
}
