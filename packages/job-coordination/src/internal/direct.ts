import type { DispatchRequest } from '@vega/job-core'
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

export function directOf(coordinator: Coordinator): DirectDecision | undefined {
  return (coordinator as { [DIRECT]?: DirectDecision })[DIRECT]
}

/** `proceed()` as the context does it: indexed first, so a call the body makes sees it as a peer. */
export function trackAndProceed(
  scope: CoordinationScope,
  request: DispatchRequest<CoordinationBinding>,
): Promise<unknown> {
  scope.track(request.binding.hash, request.task)
  return request.proceed()
}
