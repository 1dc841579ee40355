import type { DispatchRequest, Task } from '@vega/job-core'
import type { Coordinator } from '../types.js'
import type { CoordinationBinding } from './coordination-tag.js'
import type { CoordinationScope } from './scope.js'

/**
 * How a built-in of this package applies its decision without a context
 * object: `decide` straight on the kernel's request, and `follow`, core's
 * `ClaimOptions.followPeer` (which live peer a call would be merged into,
 * asked before its task is built; `undefined` when the call would do
 * anything else). Both are derived from the same rule as the built-in's
 * public `coordinate(ctx)` (see `first-peer.ts`), and the fast-path fuzz
 * test holds all three to the same outcomes, states and events.
 */
export interface FastPath {
  readonly decide: (
    scope: CoordinationScope,
    request: DispatchRequest<CoordinationBinding>,
  ) => unknown
  readonly follow:
    | ((scope: CoordinationScope, binding: CoordinationBinding) => Task<unknown> | undefined)
    | undefined
  /**
   * Told when a task `decide` decided has ended and its body has left (the
   * claim's `onExited`), for a built-in that holds a slot per call; else
   * `undefined`.
   */
  readonly exited:
    | ((scope: CoordinationScope, task: Task<unknown>, binding: CoordinationBinding) => void)
    | undefined
}

/**
 * Where a built-in keeps its fast path. Not a registered symbol: a
 * coordinator from another copy of this package goes through the protocol,
 * since its fast path expects that copy's scope.
 */
export const FAST_PATH: unique symbol = Symbol('@vega/job-coordination/fast-path')

export function fastPathOf(coordinator: Coordinator): FastPath | undefined {
  return (coordinator as { [FAST_PATH]?: FastPath })[FAST_PATH]
}
