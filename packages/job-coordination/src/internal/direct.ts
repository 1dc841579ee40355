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

const direct = new WeakMap<Coordinator, DirectDecision>()

export function setDirect(coordinator: Coordinator, decide: DirectDecision): Coordinator {
  direct.set(coordinator, decide)
  return coordinator
}

export function directOf(coordinator: Coordinator): DirectDecision | undefined {
  return direct.get(coordinator)
}

/** `proceed()` as the context does it: indexed first, so a call the body makes sees it as a peer. */
export function trackAndProceed(
  scope: CoordinationScope,
  request: DispatchRequest<CoordinationBinding>,
): Promise<unknown> {
  scope.track(request.binding.hash, request.task)
  return request.proceed()
}
