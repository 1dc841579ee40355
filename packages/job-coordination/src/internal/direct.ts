import type { DispatchRequest, Task } from '@vega/job-core'
import type { Coordinator } from '../types.js'
import type { CoordinationBinding } from './coordination-tag.js'
import type { CoordinationScope } from './scope.js'

/**
 * A built-in strategy's decision made straight on the kernel's request: no
 * context object, no peers array, no event draft unless someone listens. Only
 * for strategies of this package that decide exactly once and synchronously,
 * so the protocol's guards have nothing to catch; their public `coordinate`
 * stays, for a coordinator that delegates to them.
 */
export type DirectDecision = (
  scope: CoordinationScope,
  request: DispatchRequest<CoordinationBinding>,
) => unknown

/**
 * Where a built-in keeps its direct decision (set by `defineDirectCoordinator`).
 * Not a registered symbol: a coordinator from another copy of this package
 * goes through the protocol, since its decision expects that copy's scope.
 */
export const DIRECT: unique symbol = Symbol('@vega/job-coordination/direct')

/**
 * A direct coordinator's answer to "which live peer would this call be
 * merged into?", asked by the kernel before it builds the task (core's
 * `ClaimOptions.followPeer`). It must name exactly the peer the direct
 * decision would `follow`, or `undefined` when that decision would do
 * anything else.
 */
export type FollowPeer = (
  scope: CoordinationScope,
  binding: CoordinationBinding,
) => Task<unknown> | undefined

export const FOLLOW: unique symbol = Symbol('@vega/job-coordination/follow')

export function followOf(coordinator: Coordinator): FollowPeer | undefined {
  return (coordinator as { [FOLLOW]?: FollowPeer })[FOLLOW]
}

export function directOf(coordinator: Coordinator): DirectDecision | undefined {
  return (coordinator as { [DIRECT]?: DirectDecision })[DIRECT]
}

/** `proceed()` as the context does it: indexed first, so a call the body makes sees it as a peer. */
export function trackAndProceed(
  scope: CoordinationScope,
  request: DispatchRequest<CoordinationBinding>,
): Promise<unknown> {
  scope.track(request.binding, request.task)
  return request.proceed()
}
